#include "mf/json/jsonl.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mf/diag/codes.hpp"

namespace {

using mf::json::JsonlReader;
using mf::json::Value;
namespace codes = mf::diag::codes;

struct RawLine {
  std::int64_t number;
  std::string text;
  bool terminated;
  bool operator==(const RawLine&) const = default;
};

std::ostream& operator<<(std::ostream& os, const RawLine& l) {
  return os << "{" << l.number << ", \"" << l.text << "\", " << l.terminated << "}";
}

std::vector<RawLine> raw_lines(std::string_view text) {
  JsonlReader reader(text);
  std::vector<RawLine> out;
  JsonlReader::Line line;
  while (reader.next_line(line))
    out.push_back({line.number, std::string(line.text), line.terminated});
  return out;
}

TEST(JsonlLines, EveryLineInTurnIncludingEmptyOnes) {
  EXPECT_EQ(raw_lines("a\n\nb\n"),
            (std::vector<RawLine>{{1, "a", true}, {2, "", true}, {3, "b", true}}));
}

TEST(JsonlLines, UnterminatedLastLineIsFlagged) {
  EXPECT_EQ(raw_lines("a\nb"), (std::vector<RawLine>{{1, "a", true}, {2, "b", false}}));
}

TEST(JsonlLines, NoPhantomLineAfterFinalNewline) {
  EXPECT_TRUE(raw_lines("").empty());
  EXPECT_EQ(raw_lines("\n"), (std::vector<RawLine>{{1, "", true}}));
  EXPECT_EQ(raw_lines("x\n"), (std::vector<RawLine>{{1, "x", true}}));
  EXPECT_EQ(raw_lines("\n\n"), (std::vector<RawLine>{{1, "", true}, {2, "", true}}));
}

TEST(JsonlLines, CarriageReturnStaysInTheLine) {
  EXPECT_EQ(raw_lines("{}\r\n{}"), (std::vector<RawLine>{{1, "{}\r", true}, {2, "{}", false}}));
}

TEST(JsonlLines, EndOfInputIsSticky) {
  JsonlReader reader("a");
  JsonlReader::Line line;
  ASSERT_TRUE(reader.next_line(line));
  EXPECT_FALSE(reader.next_line(line));
  EXPECT_FALSE(reader.next_line(line));
}

TEST(JsonlParse, ParsesEachLine) {
  JsonlReader reader("{\"seq\":0}\n{\"seq\":1}\n");
  mf::Result<Value> r = Value();
  JsonlReader::Line line;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(reader.next(r, &line));
    ASSERT_TRUE(r.ok()) << r.diagnostics().front().message;
    EXPECT_EQ(line.number, i + 1);
    EXPECT_TRUE(line.terminated);
    EXPECT_EQ(*r->find("seq"), Value(i));
  }
  EXPECT_FALSE(reader.next(r, &line));
}

TEST(JsonlParse, ErrorOnLineThreeCarriesStreamLine) {
  const std::string bad = "{\"a\":}";
  // The reader views its input, so the stream must outlive it.
  const std::string stream = "{\"a\":1}\n[2]\n" + bad + "\n{\"b\":3}\n";
  JsonlReader reader(stream);
  mf::Result<Value> r = Value();
  ASSERT_TRUE(reader.next(r));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(reader.next(r));
  ASSERT_TRUE(r.ok());

  ASSERT_TRUE(reader.next(r));
  ASSERT_FALSE(r.ok());
  auto alone = mf::json::parse(bad);
  ASSERT_FALSE(alone.ok());
  const auto& d = r.diagnostics().front();
  EXPECT_EQ(d.code, alone.diagnostics().front().code);
  EXPECT_EQ(d.line, 3);
  // Only the line moves; the column within the line is the parser's own.
  EXPECT_EQ(d.column, alone.diagnostics().front().column);
  EXPECT_GT(d.column, 1);

  // The reader carries on after a bad line.
  ASSERT_TRUE(reader.next(r));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(reader.next(r));
}

TEST(JsonlParse, EmptyLineIsS011AtColumnOne) {
  JsonlReader reader("{}\n\n{}\n");
  mf::Result<Value> r = Value();
  ASSERT_TRUE(reader.next(r));
  ASSERT_TRUE(r.ok());
  JsonlReader::Line line;
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics().size(), 1u);
  const auto& d = r.diagnostics().front();
  EXPECT_EQ(d.code, codes::kMalformed);
  EXPECT_EQ(d.message, "empty line");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 1);
  EXPECT_EQ(line.number, 2);
  EXPECT_TRUE(line.text.empty());
}

TEST(JsonlParse, CarriageReturnIsKeptAndParsedAsJsonWhitespace) {
  // RFC 8259 counts '\r' as insignificant whitespace, so a CRLF stream parses; the raw line still
  // shows the '\r' for checks that need byte-exact canonical lines.
  JsonlReader reader("{}\r\n[1\r]\r\n");
  mf::Result<Value> r = Value();
  JsonlReader::Line line;
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(line.text, "{}\r");
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, Value(mf::json::Array{1}));
  EXPECT_EQ(line.text, "[1\r]\r");
}

TEST(JsonlParse, LoneCarriageReturnIsNotALineBreak) {
  // Only '\n' ends a line: two documents joined by '\r' are one line with trailing content.
  JsonlReader reader("{}\r{}\n");
  mf::Result<Value> r = Value();
  JsonlReader::Line line;
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().code, codes::kMalformed);
  EXPECT_EQ(r.diagnostics().front().line, 1);
  EXPECT_FALSE(reader.next(r, &line));
}

TEST(JsonlParse, UnterminatedCompleteLastLineParsesButIsFlagged) {
  JsonlReader reader("{\"a\":1}\n{\"b\":2}");
  mf::Result<Value> r = Value();
  JsonlReader::Line line;
  ASSERT_TRUE(reader.next(r, &line));
  EXPECT_TRUE(line.terminated);
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(line.number, 2);
  EXPECT_FALSE(line.terminated);
  EXPECT_FALSE(reader.next(r, &line));
}

TEST(JsonlParse, TruncatedTailIsAnErrorOnItsLineAndFlagged) {
  // What a crash in the middle of appending an event leaves behind.
  JsonlReader reader("{\"a\":1}\n{\"b\":2}\n{\"c\":");
  mf::Result<Value> r = Value();
  JsonlReader::Line line;
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_TRUE(reader.next(r, &line));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().line, 3);
  EXPECT_EQ(line.number, 3);
  EXPECT_FALSE(line.terminated);
}

TEST(JsonlParse, LimitsApplyPerLine) {
  mf::json::ReadLimits limits;
  limits.max_bytes = 8;
  JsonlReader reader("[1,2,3]\n[1,2,3,4,5]\n", limits);
  mf::Result<Value> r = Value();
  ASSERT_TRUE(reader.next(r));
  EXPECT_TRUE(r.ok());
  ASSERT_TRUE(reader.next(r));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics().front().code, codes::kTooLarge);
}

TEST(JsonlWrite, AppendsCanonicalLines) {
  std::string out = "prefix\n";
  mf::json::append_jsonl(Value(mf::json::Object{{"b", 2}, {"a", Value(mf::json::Array{1, "x"})}}),
                         out);
  mf::json::append_jsonl(Value(nullptr), out);
  EXPECT_EQ(out, "prefix\n{\"a\":[1,\"x\"],\"b\":2}\nnull\n");
}

TEST(JsonlWrite, RoundTripsThroughTheReader) {
  std::vector<Value> values = {Value(mf::json::Object{{"event", "run_started"}, {"seq", 0}}),
                               Value(mf::json::Array{}), Value("line\nbreak")};
  std::string out;
  for (const Value& v : values) mf::json::append_jsonl(v, out);
  JsonlReader reader(out);
  mf::Result<Value> r = Value();
  JsonlReader::Line line;
  for (const Value& v : values) {
    ASSERT_TRUE(reader.next(r, &line));
    ASSERT_TRUE(r.ok()) << r.diagnostics().front().message;
    EXPECT_EQ(*r, v);
    EXPECT_TRUE(line.terminated);
  }
  EXPECT_FALSE(reader.next(r, &line));
}

}  // namespace
