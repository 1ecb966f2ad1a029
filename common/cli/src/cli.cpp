// The CLI conventions of cli.hpp over Boost.Program_options: declared options, --help and
// --version texts, and the checks every program's options share.
#include "mf/cli/cli.hpp"

#include <csignal>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <sstream>

#include "help.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/io/file.hpp"
#include "mf/text/suggest.hpp"
#include "mf_build_info.hpp"

namespace mf::cli {
namespace {

// Abbreviated long options are refused: an abbreviation that works today becomes ambiguous the day
// another option is added, and scripts written against it break.
constexpr int kParserStyle =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

// Help and version are the only things a tool prints through iostreams; a failed write (stdout on a
// full disk or a closed pipe) is an I/O error, not success.
int print_to_stdout(const Tool& tool, const std::string& text) {
  std::cout << text;
  std::cout.flush();
  if (!std::cout) {
    say(tool.name + ": I/O error: cannot write to stdout");
    return kInternal;
  }
  return kSuccess;
}

// The subcommand the command line runs: its first operand, or "" when that is an input.
std::string subcommand(const Context& ctx) {
  const auto operands = ctx.positionals();
  const auto& known = ctx.tool.commands;
  std::string command = operands.empty() ? std::string() : operands[0];
  if (!known.empty() && std::find(known.begin(), known.end(), command) == known.end()) {
    command.clear();
  }
  return command;
}

// The first declared rule a given option breaks (wrong subcommand, value not among the choices,
// number too small), as a usage message; empty when none.
template <class Rules>
std::string check_rules(const Rules& rules, const Context& ctx) {
  const std::string command = subcommand(ctx);
  for (const auto& rule : rules) {
    if (ctx.vars.count(rule.name) == 0) continue;
    const std::string option = "--" + rule.name;
    const auto& cmds = rule.commands;
    if (!cmds.empty() && std::find(cmds.begin(), cmds.end(), command) == cmds.end()) {
      if (!command.empty() && cmds.size() == 1 && cmds[0].empty()) {
        return option + " does not apply to '" + command + "'";
      }
      std::string owners;
      for (const auto& c : cmds) {
        if (c.empty()) continue;
        owners += (owners.empty() ? "'" : " or '") + c + "'";
      }
      return option + " applies to " + owners + " only";
    }
    const auto& value = ctx.vars[rule.name].value();
    if (const auto* text = boost::any_cast<std::string>(&value); text && !rule.choices.empty()) {
      if (std::find(rule.choices.begin(), rule.choices.end(), *text) == rule.choices.end()) {
        std::string list;
        for (const auto& c : rule.choices) list += (list.empty() ? "" : ", ") + c;
        return option + " must be one of " + list;
      }
    }
    if (const auto* number = boost::any_cast<std::int64_t>(&value); number && *number < rule.min) {
      return option + " must be at least " + std::to_string(rule.min);
    }
    if (const auto* number = boost::any_cast<std::int64_t>(&value); number && *number > rule.max) {
      return option + " must be at most " + std::to_string(rule.max);
    }
  }
  return {};
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// `path` as one shell word: as it is when nothing in it is special to the shell, else quoted.
std::string shell_word(const std::string& path) {
  const bool plain = !path.empty() && std::all_of(path.begin(), path.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || std::strchr("_./-+=:,@%", c) != nullptr;
  });
  if (plain) return path;
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The directory a path option needs to exist before any work: a file's directory (none for a bare
// name or stdout), a directory itself, a store's parent. Empty when there is none to check.
std::string needed_directory(const std::string& value, Path kind) {
  if (kind == Path::OutDir) return value;
  std::string path = value;
  if (kind == Path::Store) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
  }
  if (kind == Path::OutFile && path == "-") return {};
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The path rules of docs/cli.md ("Output files and directories") for every given path option,
// before any work: a usage error for "-" naming a directory, MF-S017 for a missing output
// directory. kSuccess when they hold.
template <class Rules>
int check_paths(const Rules& rules, const Context& ctx) {
  const std::string command = subcommand(ctx);
  for (const auto& rule : rules) {
    if (rule.path == Path::None || ctx.vars.count(rule.name) == 0) continue;
    const auto* value = boost::any_cast<std::string>(&ctx.vars[rule.name].value());
    if (value == nullptr) continue;
    Path kind = rule.path;
    const auto& writes = rule.writes;
    if ((kind == Path::OutDir || kind == Path::Store) && !writes.empty() &&
        std::find(writes.begin(), writes.end(), command) == writes.end()) {
      kind = Path::InDir;
    }
    if (kind != Path::OutFile && *value == "-") {
      return usage_error(ctx.tool, "--" + rule.name +
                                       " names a directory; '-' (stdin or stdout) "
                                       "stands for a file only");
    }
    if (kind == Path::InDir) continue;
    const std::string dir = needed_directory(*value, kind);
    if (dir.empty() || is_directory(dir)) continue;
    struct stat st {};
    const std::string problem = ::stat(dir.c_str(), &st) == 0
                                    ? "output directory '" + dir + "' is not a directory"
                                    : "output directory '" + dir +
                                          "' does not exist (create it: mkdir -p " +
                                          shell_word(dir) + ")";
    return report(ctx.tool, {diag::error(diag::codes::kOutputDirMissing, problem)});
  }
  return kSuccess;
}

}  // namespace

bool Context::progress() const {
  return !quiet && ::isatty(STDERR_FILENO) == 1;
}

std::string Context::get(const Text& o, std::string fallback) const {
  return given(o) ? vars[o.name()].as<std::string>() : fallback;
}

std::vector<std::string> Context::get(const Texts& o) const {
  return given(o) ? vars[o.name()].as<std::vector<std::string>>() : std::vector<std::string>{};
}

std::int64_t Context::get(const Number& o, std::int64_t fallback) const {
  return given(o) ? vars[o.name()].as<std::int64_t>() : fallback;
}

bool Context::fixed_clock(const Flag& o) const {
  const char* env = std::getenv("MF_FIXED_CLOCK");
  return given(o) || (env != nullptr && std::string_view(env) == "1");
}

std::string Context::store_dir(const Text& o) const {
  const char* env = std::getenv("MF_STORE");
  return get(o, env != nullptr ? env : "");
}

int require(const Context& ctx,
            std::initializer_list<std::reference_wrapper<const OptionBase>> required) {
  for (const OptionBase& o : required) {
    if (!ctx.given(o)) return usage_error(ctx.tool, "--" + o.name() + " is required");
  }
  return kSuccess;
}

int secret_from_env(const Context& ctx, const Text& o, std::string& secret) {
  secret.clear();
  if (!ctx.given(o)) return kSuccess;
  const std::string why = diag::secret_from_env(o.name(), ctx.get(o), secret);
  return why.empty() ? kSuccess : usage_error(ctx.tool, why);
}

std::string Options::add(const Decl& d, const po::value_semantic* semantic) {
  if (semantic == nullptr) {
    description_.add_options()(d.name, d.help);
  } else {
    description_.add_options()(d.name, semantic, d.help);
  }
  std::string name = d.name;
  const auto comma = name.find(',');
  const std::string short_name = comma == std::string::npos ? "" : "-" + name.substr(comma + 1);
  name = name.substr(0, comma);
  rules_.push_back({name, d.commands, d.choices, d.min, d.max, short_name, d.value, d.help,
                    semantic != nullptr, d.path, d.writes});
  return name;
}

Flag Options::flag(const Decl& d) {
  return Flag(add(d, nullptr));
}

Text Options::text(const Decl& d) {
  return Text(add(d, po::value<std::string>()->value_name(d.value)));
}

Texts Options::texts(const Decl& d) {
  return Texts(add(d, po::value<std::vector<std::string>>()->composing()->value_name(d.value)));
}

Number Options::number(const Decl& d) {
  return Number(add(d, po::value<std::int64_t>()->value_name(d.value)));
}

std::vector<std::string> Context::positionals() const {
  if (tool.positional.empty() || vars.count(tool.positional) == 0) return {};
  return vars[tool.positional].as<std::vector<std::string>>();
}

std::string version_line(const std::string& name) {
  return name + " " + MF_VERSION + " (build " + MF_BUILD_ID + ")";
}

void say(std::string_view line) {
  std::string text(line);
  if (text.empty() || text.back() != '\n') text.push_back('\n');
  // Whatever iostreams hold for stderr goes first, so the order of lines is kept.
  std::cerr.flush();
  // Nothing more can be said about a stderr that cannot be written to.
  (void)io::write_all(STDERR_FILENO, text);
}

int usage_error(const Tool& tool, std::string_view what) {
  // Option values are echoed in usage messages (Boost's among them): never a secret, and escaped
  // as a diagnostic is.
  say(tool.name + ": usage error: " + diag::printable(diag::redact_secrets(what)) + "\nTry '" +
      tool.name + " --help'.");
  return kRejected;
}

int unknown_command(const Tool& tool, std::string_view given,
                    const std::vector<std::string>& known) {
  return usage_error(tool, text::unknown_command(given, known));
}

int report(const Tool& tool, const diag::Diagnostics& ds, std::string_view source, diag::Job job) {
  for (const auto& d : ds) say(tool.name + ": " + diag::render_text(d, source));
  return diag::exit_status(ds, job);
}

int finish(const Context& ctx, const diag::CommandOutcome& outcome) {
  if (!outcome.usage.empty()) return usage_error(ctx.tool, outcome.usage);
  if (!outcome.diagnostics.empty()) {
    return report(ctx.tool, outcome.diagnostics, outcome.source, outcome.job);
  }
  if (!outcome.warnings.empty()) report(ctx.tool, outcome.warnings, outcome.source, outcome.job);
  for (const auto& remark : outcome.remarks) say(ctx.tool.name + ": " + remark);
  if (!outcome.summary.empty()) say(ctx.tool.name + ": " + outcome.summary);
  if (outcome.interrupted) return 128 + cancellation_signal();
  return outcome.failed ? kFailure : kSuccess;
}

int finish(const Context& ctx, const Status& status, std::string_view source) {
  return status ? kSuccess : report(ctx.tool, status.diagnostics(), source);
}

std::vector<std::string> split_commas(std::string_view list) {
  std::vector<std::string> items;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) items.emplace_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return items;
}

std::vector<std::string> split_commas(const std::vector<std::string>& lists) {
  std::vector<std::string> items;
  for (const auto& list : lists) {
    for (auto& item : split_commas(list)) items.push_back(std::move(item));
  }
  return items;
}

ProgressLine::ProgressLine(bool enabled, std::string label, std::function<double()> seconds)
    : enabled_(enabled), label_(diag::printable(label)), seconds_(std::move(seconds)) {
  if (!seconds_) {
    seconds_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  if (enabled_) start_ = seconds_();
}

ProgressLine::~ProgressLine() {
  if (!drawn_) return;
  if (pending_ == shown_) {
    (void)io::write_all(STDERR_FILENO, "\n");
  } else {
    write(pending_, "\n");
  }
}

void ProgressLine::draw(std::string_view text) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.assign(text);
  const double now = seconds_();
  if (now - start_ < kProgressDelay || (drawn_ && now - last_ < kProgressInterval)) return;
  last_ = now;
  drawn_ = true;
  shown_ = pending_;
  write(pending_, "");
}

void ProgressLine::write(std::string_view text, std::string_view end) {
  // "\x1b[K" clears what a longer line drawn before left to the right.
  (void)io::write_all(STDERR_FILENO,
                      "\r" + label_ + ": " + std::string(text) + "\x1b[K" + std::string(end));
}

std::function<void(std::uint64_t, std::uint64_t)> ProgressLine::counts(std::string unit) {
  if (!enabled_) return {};
  return [this, unit = std::move(unit)](std::uint64_t done, std::uint64_t total) {
    draw(std::to_string(done) + "/" + std::to_string(total) + " " + unit);
  };
}

std::function<void(std::uint64_t, std::uint64_t)> ProgressLine::bytes() {
  if (!enabled_) return {};
  return [this](std::uint64_t done, std::uint64_t total) {
    draw(mebibytes(done) + (total > 0 ? " of " + mebibytes(total) : ""));
  };
}

std::string mebibytes(std::uint64_t bytes) {
  const std::uint64_t tenths = bytes * 10 / (1u << 20);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " MiB";
}

namespace {
// `TOOL --help [COMMAND]`, `TOOL help [COMMAND]`: the overview, or one subcommand's help.
int print_help(const Tool& tool, const Options& options, std::vector<std::string> operands) {
  const auto rules = Help::options(options);
  const auto commands = subcommands(tool, rules);
  const bool named = !operands.empty() && operands[0] == "help";
  if (named) operands.erase(operands.begin());
  std::string command;
  if (!operands.empty() &&
      std::find(commands.begin(), commands.end(), operands[0]) != commands.end()) {
    command = operands[0];
  } else if (named && !operands.empty()) {
    std::string list;
    for (const auto& c : commands) list += (list.empty() ? "" : ", ") + c;
    return usage_error(tool, "no command '" + operands[0] + "'" +
                                 (list.empty() ? ": " + tool.name + " has no subcommands"
                                               : " (commands: " + list + ")"));
  }
  return print_to_stdout(tool, help_text(tool, rules, command));
}
}  // namespace

int run(int argc, char** argv, const Tool& tool, const Options& options,
        const std::function<int(Context&)>& body) {
  // Shell completion (completions/): the candidates for the last word, before anything is parsed.
  if (argc >= 2 && std::string_view(argv[1]) == "--complete") {
    return print_to_stdout(tool,
                           completions(tool, Help::options(options), {argv + 2, argv + argc}));
  }
  po::options_description all;
  for (const auto& option : options.description_.options()) all.add(option);
  all.add_options()                                            //
      ("quiet,q", "silence progress output on stderr")         //
      ("help,h", "print this help and exit")                   //
      ("help-man", "print the man page (roff) and exit")       //
      ("version", "print the version and build id and exit");  //

  po::positional_options_description positional;
  if (!tool.positional.empty()) {
    positional.add(tool.positional.c_str(), -1);
    if (options.description_.find_nothrow(tool.positional, false) == nullptr) {
      all.add_options()(tool.positional.c_str(), po::value<std::vector<std::string>>());
    }
  }

  po::variables_map vars;
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(all)
                  .positional(positional)
                  .style(kParserStyle)
                  .run(),
              vars);
    // Help and version win over missing required options, so they are handled before notify().
    const auto operands = vars.count(tool.positional) != 0
                              ? vars[tool.positional].as<std::vector<std::string>>()
                              : std::vector<std::string>{};
    if (vars.count("help") != 0 || (!operands.empty() && operands[0] == "help")) {
      return print_help(tool, options, operands);
    }
    if (vars.count("help-man") != 0) {
      return print_to_stdout(tool, man_page(tool, Help::options(options)));
    }
    if (vars.count("version") != 0) return print_to_stdout(tool, version_line(tool.name) + "\n");
    po::notify(vars);
  } catch (const po::unknown_option& e) {
    // The closest declared long option, when one is close: "--trce" -> "--trace".
    std::vector<std::string> known;
    for (const auto& option : all.options()) {
      if (!option->long_name().empty() && option->long_name() != tool.positional) {
        known.push_back("--" + option->long_name());
      }
    }
    return usage_error(tool, e.what() + text::did_you_mean(e.get_option_name(), known));
  } catch (const po::error& e) {
    return usage_error(tool, e.what());
  }

  Context context{tool, vars, vars.count("quiet") != 0};
  // Where the first operand is a subcommand or an input (mf-compile verify | HARNESS), one that is
  // no file but close to a subcommand is a misspelt subcommand, not a missing input.
  if (const auto operands = context.positionals(); !tool.commands.empty() && !operands.empty()) {
    const std::string& first = operands[0];
    struct stat st {};
    if (std::find(tool.commands.begin(), tool.commands.end(), first) == tool.commands.end() &&
        ::stat(first.c_str(), &st) != 0 && !text::did_you_mean(first, tool.commands).empty()) {
      return unknown_command(tool, first, tool.commands);
    }
  }
  if (std::string problem = check_rules(options.rules_, context); !problem.empty()) {
    return usage_error(tool, problem);
  }
  if (int rc = check_paths(options.rules_, context); rc != kSuccess) return rc;
  try {
    return body(context);
  } catch (const std::bad_alloc&) {
    say(tool.name + ": internal error: out of memory");
  } catch (const std::exception& e) {
    say(tool.name + ": internal error: " + diag::printable(diag::redact_secrets(e.what())));
  } catch (...) {
    say(tool.name + ": internal error: unknown exception");
  }
  return kInternal;
}

namespace {
std::atomic<bool> g_cancelled{false};
std::atomic<int> g_signal{0};
extern "C" void on_cancel_signal(int signal) {
  g_signal.store(signal);
  g_cancelled.store(true);
}
}  // namespace

int cancellation_signal() {
  const int signal = g_signal.load();
  return signal != 0 ? signal : SIGINT;
}

const std::atomic<bool>& cancellation_flag() {
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_cancel_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return true;
  }();
  (void)installed;
  return g_cancelled;
}

}  // namespace mf::cli
