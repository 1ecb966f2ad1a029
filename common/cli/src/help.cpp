// --help, the man page and completion candidates, all rendered from the Tool and its declared
// options, so the three never disagree with what the parser accepts.
#include "help.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "mf_build_info.hpp"

extern char** environ;  // NOLINT: POSIX; the names --*-env options complete to

namespace mf::cli {
namespace {

using Rule = Help::Rule;

constexpr std::size_t kWidth = 80;            // every line of --help fits in 80 columns
constexpr std::size_t kManExampleWidth = 72;  // man indents examples by 7 and more
constexpr const char* kExitCodesLine =
    "Exit codes: 0 success, 1 failed outcome, 2 rejected, 3 internal or I/O error\n";
// The exit status table of docs/cli.md, for the man page.
constexpr const char* kExitStatus[][2] = {
    {"0", "Success: the work succeeded."},
    {"1",
     "The work finished and its outcome is a failure (run failed, regression, mismatch, "
     "integrity violation)."},
    {"2",
     "The request was rejected before any work: usage error, invalid input or "
     "configuration."},
    {"3", "Internal or I/O error."},
};
constexpr const char* kPrograms[] = {"mf-compile",  "mf-run",   "mf-replay", "mf-eval",
                                     "mf-toolread", "mf-audit", "mf-store"};
// --model's backends (docs/live-backends.md); each takes a file after the prefix.
constexpr const char* kModelPrefixes[] = {"scripted:", "sim:", "openai:", "anthropic:"};

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The option a command-line word names ("--jobs", "-j", "--jobs=4"), or nullptr.
const Rule* find_option(const std::vector<Rule>& options, std::string_view word) {
  if (starts_with(word, "--")) {
    word = word.substr(
        2, word.find('=') == std::string_view::npos ? std::string_view::npos : word.find('=') - 2);
    for (const auto& o : options) {
      if (o.name == word) return &o;
    }
  } else if (word.size() >= 2 && word[0] == '-') {
    for (const auto& o : options) {
      if (!o.short_name.empty() && o.short_name == word.substr(0, 2)) return &o;
    }
  }
  return nullptr;
}

// The spaces a shell line may be split at: outside quotes and "[...]" groups, before a comment,
// each the last of its run of spaces.
std::vector<std::size_t> word_breaks(std::string_view line) {
  std::vector<std::size_t> breaks;
  char quote = 0;
  int depth = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']' && depth > 0) {
      --depth;
    } else if (c == '#' && i > 0 && line[i - 1] == ' ') {
      break;  // a comment runs to the end of the line
    } else if (c == ' ' && depth == 0 && i + 1 < line.size() && line[i + 1] != ' ') {
      breaks.push_back(i);
    }
  }
  return breaks;
}

// Splits a shell line into words at its word_breaks, keeping quotes; a "[...]" group of a usage
// line is one word.
std::vector<std::string> shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::size_t start = 0;
  std::vector<std::size_t> breaks = word_breaks(line);
  breaks.push_back(line.size());
  for (std::size_t end : breaks) {
    std::string_view word = line.substr(start, end - start);
    while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
    while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
    if (!word.empty()) words.emplace_back(word);
    start = end + 1;
  }
  return words;
}

// The index of the first operand among `words` (options and their values skipped), or words.size().
std::size_t first_operand(const std::vector<Rule>& options, const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i];
    if (w == "--") return i + 1;
    if (w.empty() || w[0] == '[' || w == "-") {
      if (w == "-") return i;
      continue;
    }
    if (w[0] != '-') return i;
    const Rule* o = find_option(options, w);
    const bool inline_value = w.find('=') != std::string::npos || (w[1] != '-' && w.size() > 2);
    if (o != nullptr && o->takes_value && !inline_value) ++i;
  }
  return words.size();
}

// The subcommand a usage or example line runs ("" for none): the operand after its first TOOL.
std::string command_of(const Tool& tool, const std::vector<Rule>& options,
                       const std::vector<std::string>& commands, std::string_view line) {
  std::size_t at = 0;
  for (;; ++at) {
    at = line.find(tool.name, at);
    if (at == std::string_view::npos) return {};
    const std::size_t end = at + tool.name.size();
    const bool starts =
        at == 0 || std::string_view(" (|&;").find(line[at - 1]) != std::string::npos;
    if (starts && (end == line.size() || line[end] == ' ')) break;
  }
  const auto words = shell_words(line.substr(at + tool.name.size()));
  const std::size_t i = first_operand(options, words);
  return i < words.size() && contains(commands, words[i]) ? words[i] : std::string();
}

bool applies(const Rule& o, const std::string& command) {
  return o.commands.empty() || contains(o.commands, command);
}

bool has_default_mode(const Tool& tool, const std::vector<Rule>& options,
                      const std::vector<std::string>& commands) {
  if (commands.empty() || !tool.commands.empty()) return true;
  return std::any_of(options.begin(), options.end(),
                     [](const Rule& o) { return contains(o.commands, ""); });
}

// Greedy word wrap of one paragraph: `first` before the first line, `rest` before the others.
std::string wrap(std::string_view text, const std::string& first, const std::string& rest,
                 std::size_t width = kWidth) {
  std::string out, line = first;
  bool empty = true;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) {
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = rest;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

// Each line of `text` wrapped on its own, continuations at the line's own indentation.
std::string wrap_lines(std::string_view text, std::size_t width = kWidth) {
  std::string out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    const std::string indent(std::min(line.find_first_not_of(' '), line.size()), ' ');
    out += line.size() <= width ? line + "\n" : wrap(line, indent, indent, width);
  }
  return out;
}

// A command line wrapped at spaces outside quotes, brackets and comments. Examples break with a
// trailing backslash, so every wrapped example still pastes into a shell as one command.
std::string wrap_command(std::string_view line, const std::string& first, const std::string& rest,
                         bool backslash, std::size_t width = kWidth) {
  const std::vector<std::size_t> breaks = word_breaks(line);  // where a line may end
  const std::size_t tail = backslash ? 2 : 0;                 // " \"
  std::string out;
  std::string prefix = first;
  std::size_t start = 0;
  while (prefix.size() + (line.size() - start) > width) {
    // The last break that fits; better, one before an option, an operator or a "[...]" group
    // ("--out-dir DIR" and "| jq" stay whole), if that leaves the line at least half full.
    std::size_t cut = std::string::npos, nice = std::string::npos;
    for (std::size_t b : breaks) {
      if (b <= start) continue;
      std::size_t end = b;
      while (end > start && line[end - 1] == ' ') --end;
      if (prefix.size() + (end - start) + tail > width && cut != std::string::npos) break;
      cut = b;
      if (prefix.size() + (end - start) + tail > width) break;  // nothing shorter: overflow
      if (std::string_view("-|&>[").find(line[b + 1]) != std::string_view::npos &&
          prefix.size() + (end - start) >= width / 2) {
        nice = b;
      }
    }
    if (nice != std::string::npos && cut != std::string::npos &&
        prefix.size() + (cut - start) + tail <= width) {
      cut = nice;
    }
    if (cut == std::string::npos) break;
    std::size_t end = cut;
    while (end > start && line[end - 1] == ' ') --end;
    out += prefix + std::string(line.substr(start, end - start)) + (backslash ? " \\" : "") + "\n";
    prefix = rest;
    start = cut + 1;
  }
  return out + prefix + std::string(line.substr(start)) + "\n";
}

// The lines of Tool::usage, unindented; a line that does not start with the tool's name continues
// the line before it (a usage line the main wrapped by hand).
std::vector<std::string> usage_of(const Tool& tool) {
  std::vector<std::string> lines;
  std::istringstream in{tool.usage};
  for (std::string line; std::getline(in, line);) {
    const auto begin = line.find_first_not_of(' ');
    if (begin == std::string::npos) continue;
    line = line.substr(begin);
    if (!lines.empty() && !starts_with(line, tool.name + " ")) {
      lines.back() += " " + line;
    } else {
      lines.push_back(line);
    }
  }
  return lines;
}

// The usage lines of `command` ("" = those of no subcommand; all of them for the overview).
std::vector<std::string> usage_lines(const Tool& tool, const std::vector<Rule>& options,
                                     const std::vector<std::string>& commands,
                                     const std::string& command, bool all) {
  std::vector<std::string> out;
  for (const auto& line : usage_of(tool)) {
    if (all || command_of(tool, options, commands, line) == command) out.push_back(line);
  }
  if (out.empty()) out.push_back(tool.name + " " + command + " [options]");
  return out;
}

std::string command_line(const Tool& tool, const std::vector<Rule>& options,
                         const std::vector<std::string>& commands, const std::string& command) {
  for (const auto& c : tool.command_lines) {
    if (c.name == command) return c.line;
  }
  for (const auto& line : usage_of(tool)) {
    if (command_of(tool, options, commands, line) != command) continue;
    const auto at = line.find(command, line.find(tool.name) + tool.name.size());
    return line.substr(at + command.size() + (at + command.size() < line.size() ? 1 : 0));
  }
  return {};
}

std::string value_name(const Rule& o) {
  return o.value.empty() ? std::string("ARG") : o.value;
}

// The help of an option, with its choices when the help does not name them all.
std::string option_help(const Rule& o) {
  std::string help = o.help;
  const bool named = std::all_of(o.choices.begin(), o.choices.end(), [&](const std::string& c) {
    return help.find(c) != std::string::npos;
  });
  if (!named) {
    std::string list;
    for (const auto& c : o.choices) list += (list.empty() ? "" : ", ") + c;
    help += " (" + value_name(o) + ": " + list + ")";
  }
  return help;
}

std::string options_table(const std::vector<const Rule*>& options) {
  std::vector<std::string> left;
  std::size_t column = 0;
  for (const Rule* o : options) {
    std::string l = "  " + (o->short_name.empty() ? "    " : o->short_name + ", ") + "--" + o->name;
    if (o->takes_value) l += " " + value_name(*o);
    column = std::max(column, l.size() + 2);
    left.push_back(std::move(l));
  }
  column = std::min<std::size_t>(column, 30);
  std::string out;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string pad(column, ' ');
    if (left[i].size() + 2 > column) {
      out += left[i] + "\n" + wrap(option_help(*options[i]), pad, pad);
    } else {
      out +=
          wrap(option_help(*options[i]), left[i] + std::string(column - left[i].size(), ' '), pad);
    }
  }
  return out;
}

std::string usage_block(const std::vector<std::string>& lines, const Tool& tool) {
  std::string out;
  const std::string rest(7 + tool.name.size() + 5, ' ');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += wrap_command(lines[i], i == 0 ? "Usage: " : "       ", rest, false);
  }
  return out;
}

std::string examples_block(const std::vector<std::string>& examples, std::size_t width,
                           const std::string& indent) {
  std::string out;
  for (const auto& e : examples) out += wrap_command(e, indent, indent + "    ", true, width);
  return out;
}

// The examples of `command`; for the overview, those of no subcommand and the first of each.
std::vector<std::string> examples_of(const Tool& tool, const std::vector<Rule>& options,
                                     const std::vector<std::string>& commands,
                                     const std::string& command, bool overview) {
  std::vector<std::string> out, seen;
  for (const auto& e : tool.examples) {
    const std::string c = command_of(tool, options, commands, e);
    if (overview ? (c.empty() || !contains(seen, c)) : c == command) out.push_back(e);
    if (!c.empty()) seen.push_back(c);
  }
  return out;
}

// roff: text that prints as written ("-" a minus, a line never taken as a request).
std::string roff(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else if (c == '\'' && (out.empty() || out.back() == '\n'))
      out += "\\&'";
    else if (c == '.' && (out.empty() || out.back() == '\n'))
      out += "\\&.";
    else
      out += c;
  }
  return out;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<Rule> Help::options(const Options& declared) {
  std::vector<Rule> all = declared.rules_;
  all.push_back(
      {"quiet", {}, {}, INT64_MIN, INT64_MAX, "-q", "", "silence progress output on stderr"});
  all.push_back({"help", {}, {}, INT64_MIN, INT64_MAX, "-h", "", "print this help and exit"});
  all.push_back(
      {"version", {}, {}, INT64_MIN, INT64_MAX, "", "", "print the version and build id and exit"});
  return all;
}

std::vector<std::string> subcommands(const Tool& tool, const std::vector<Rule>& options) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& c) {
    if (!c.empty() && !contains(out, c)) out.push_back(c);
  };
  for (const auto& c : tool.command_lines) add(c.name);
  for (const auto& c : tool.commands) add(c);
  for (const auto& o : options) {
    for (const auto& c : o.commands) add(c);
  }
  return out;
}

std::string help_text(const Tool& tool, const std::vector<Rule>& options,
                      const std::string& command) {
  const auto commands = subcommands(tool, options);
  const bool overview = command.empty();
  const bool default_mode = has_default_mode(tool, options, commands);
  std::string out = usage_block(usage_lines(tool, options, commands, command, overview), tool);
  out += "\n";
  if (overview) {
    out += wrap(tool.summary, "", "") + "\n";
    if (!tool.details.empty()) out += wrap_lines(tool.details) + "\n";
  } else if (const auto it =
                 std::find_if(tool.command_lines.begin(), tool.command_lines.end(),
                              [&command](const CommandLine& c) { return c.name == command; });
             it != tool.command_lines.end() && !it->line.empty()) {
    // As a sentence: "Check a compiled plan's hash and invariants."
    std::string sentence = it->line;
    sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
    if (sentence.back() != '.') sentence += '.';
    out += wrap(sentence, "", "") + "\n";
  }
  if (overview && !commands.empty()) {
    out += "Commands:\n";
    std::size_t width = 0;
    for (const auto& c : commands) width = std::max(width, c.size());
    for (const auto& c : commands) {
      const std::string left = "  " + c + std::string(width - c.size() + 2, ' ');
      out += wrap(command_line(tool, options, commands, c), left, std::string(left.size(), ' '));
    }
    out += "\n";
  }
  std::vector<const Rule*> shown;
  for (const auto& o : options) {
    const bool common = o.commands.empty();
    if (overview ? (common || (default_mode && applies(o, ""))) : applies(o, command)) {
      shown.push_back(&o);
    }
  }
  out += (overview && !default_mode ? "Options (every command):\n" : "Options:\n");
  out += options_table(shown) + "\n";
  if (const auto examples = examples_of(tool, options, commands, command, overview);
      !examples.empty()) {
    out += "Examples:\n" + examples_block(examples, kWidth, "  ") + "\n";
  }
  if (overview && !commands.empty()) {
    out += wrap("'" + tool.name + " help COMMAND' (or '" + tool.name +
                    " COMMAND --help') shows the usage, options and examples of one command.",
                "", "");
  } else if (!overview) {
    out += wrap("'" + tool.name + " --help' describes every command; 'man " + tool.name +
                    "' is the manual.",
                "", "");
  }
  return out + kExitCodesLine;
}

std::string man_page(const Tool& tool, const std::vector<Rule>& options) {
  const auto commands = subcommands(tool, options);
  std::ostringstream out;
  out << ".TH " << upper(tool.name) << " 1 \"\" \"" << roff(tool.name) << " " << MF_VERSION
      << "\" \"Millforge Manual\"\n.nh\n.ad l\n";
  out << ".SH NAME\n" << roff(tool.name) << " \\- " << roff(tool.summary) << "\n";
  out << ".SH SYNOPSIS\n.nf\n";
  for (const auto& line : usage_of(tool)) {
    out << roff(wrap_command(line, "", "    ", false, kManExampleWidth));
  }
  out << ".fi\n.SH DESCRIPTION\n" << roff(tool.summary) << "\n.PP\n";
  if (!tool.details.empty()) {
    // A line that starts indented (a table of the details) keeps its layout.
    bool literal = false;
    for (const auto& line : [&] {
           std::vector<std::string> v;
           std::istringstream in{tool.details};
           for (std::string l; std::getline(in, l);) v.push_back(l);
           return v;
         }()) {
      const bool indented = starts_with(line, " ");
      if (indented != literal) out << (indented ? ".nf\n" : ".fi\n");
      literal = indented;
      if (line.empty()) {
        out << ".PP\n";
      } else {
        out << roff(line) << "\n";
      }
    }
    if (literal) out << ".fi\n";
  }
  if (!commands.empty()) {
    out << ".SH COMMANDS\n";
    for (const auto& c : commands) {
      out << ".TP\n.B " << roff(c) << "\n";
      for (const auto& line : usage_lines(tool, options, commands, c, false)) {
        out << roff(line) << "\n.br\n";
      }
      for (const auto& line : tool.command_lines) {
        if (line.name == c) out << roff(line.line) << "\n";
      }
    }
  }
  out << ".SH OPTIONS\n";
  for (const auto& o : options) {
    out << ".TP\n";
    if (!o.short_name.empty()) out << "\\fB" << roff(o.short_name) << "\\fR, ";
    out << "\\fB\\-\\-" << roff(o.name) << "\\fR";
    if (o.takes_value) out << " \\fI" << roff(value_name(o)) << "\\fR";
    out << "\n" << roff(option_help(o));
    if (!o.commands.empty() && !commands.empty()) {
      std::string where;
      for (const auto& c : o.commands) {
        where += (where.empty() ? "" : ", ") + (c.empty() ? "no command" : c);
      }
      out << " [" << roff(where) << "]";
    }
    out << "\n";
  }
  if (!tool.examples.empty()) {
    out << ".SH EXAMPLES\n.nf\n";
    out << roff(examples_block(tool.examples, kManExampleWidth, ""));
    out << ".fi\n";
  }
  out << ".SH EXIT STATUS\n";
  for (const auto& [code, meaning] : kExitStatus)
    out << ".TP\n.B " << code << "\n" << meaning << "\n";
  out << ".SH SEE ALSO\n";
  std::string see;
  for (const char* p : kPrograms) {
    if (tool.name == p) continue;
    see += (see.empty() ? "" : ",\n") + std::string(".BR ") + roff(p) + " (1)";
  }
  out << see << "\n.PP\nThe documentation installed in share/doc/millforge (cli.md first).\n";
  return out.str();
}

std::string completions(const Tool& tool, const std::vector<Rule>& options,
                        const std::vector<std::string>& words) {
  if (words.empty()) return {};
  const std::string cur = words.back();
  const std::vector<std::string> before(words.begin(), words.end() - 1);
  const auto commands = subcommands(tool, options);
  std::string out;
  auto offer = [&out, &cur](const std::string& candidate) {
    if (starts_with(candidate, cur)) out += candidate + "\n";
  };

  const std::size_t operand = first_operand(options, before);
  std::string command;
  if (operand < before.size() && contains(commands, before[operand])) command = before[operand];

  // The value of the option before the word.
  const Rule* o = before.empty() ? nullptr : find_option(options, before.back());
  const std::string& prev = before.empty() ? cur : before.back();
  if (o != nullptr && o->takes_value && prev.find('=') == std::string::npos &&
      (prev[1] == '-' || prev.size() == 2)) {
    std::vector<std::string> choices = o->choices;
    // A value name of lowercase words is its list of values ("yaml|json").
    if (choices.empty() && !o->value.empty() &&
        std::all_of(o->value.begin(), o->value.end(), [](char c) {
          return std::islower(static_cast<unsigned char>(c)) || c == '|' || c == '-' ||
                 std::isdigit(static_cast<unsigned char>(c));
        })) {
      std::istringstream in(o->value);
      for (std::string v; std::getline(in, v, '|');) choices.push_back(v);
    }
    if (!choices.empty()) {
      for (const auto& c : choices) offer(c);
    } else if (o->value.find("SPEC") != std::string::npos) {
      // [LABEL=]BACKEND:FILE; after the backend, files.
      const auto eq = o->value.find('=') != std::string::npos ? cur.find('=') : std::string::npos;
      const std::string label = eq == std::string::npos ? "" : cur.substr(0, eq + 1);
      if (const auto colon = cur.find(':'); colon != std::string::npos) {
        out += ":files " + cur.substr(0, colon + 1) + "\n";
      } else if (o->value.find('=') == std::string::npos || !label.empty()) {
        for (const char* p : kModelPrefixes) offer(label + p);
        if (o->value.find("FILE") != std::string::npos) out += ":files\n";
      }
    } else if (o->name.size() > 4 && o->name.compare(o->name.size() - 4, 4, "-env") == 0) {
      for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view var(*e);
        offer(std::string(var.substr(0, var.find('='))));
      }
    } else if (o->value.find("DIR") != std::string::npos &&
               o->value.find("FILE") == std::string::npos) {
      out += ":dirs\n";
    } else if (o->value.find("FILE") != std::string::npos ||
               o->value.find("PATH") != std::string::npos ||
               o->value.find("PEM") != std::string::npos ||
               o->value.find("REPORT") != std::string::npos ||
               o->value.find("DIR") != std::string::npos) {
      out += ":files\n";
    }
    return out;
  }
  if (starts_with(cur, "-")) {
    for (const auto& option : options) {
      if (applies(option, command)) offer("--" + option.name);
    }
    return out;
  }
  if (operand >= before.size()) {
    // The first operand: a subcommand, help, or (where there is no subcommand) an input.
    for (const auto& c : commands) offer(c);
    if (!commands.empty()) offer("help");
    if (has_default_mode(tool, options, commands)) out += ":files\n";
    return out;
  }
  if (before[operand] == "help" && operand + 1 == before.size()) {
    for (const auto& c : commands) offer(c);
    return out;
  }
  return out + ":files\n";
}

}  // namespace mf::cli
