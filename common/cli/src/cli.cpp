#include "mf/cli/cli.hpp"

#include <csignal>

#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <sstream>

#include "mf_build_info.hpp"

namespace mf::cli {
namespace {

constexpr const char* kExitCodesLine =
    "Exit codes: 0 success, 1 failed outcome, 2 rejected request, 3 internal or I/O error\n";

// Abbreviated long options are refused: an abbreviation that works today becomes ambiguous the day
// another option is added, and scripts written against it break.
constexpr int kParserStyle =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

std::string help_text(const Tool& tool, const po::options_description& visible) {
  std::ostringstream out;
  out << "Usage: " << tool.usage << "\n\n" << tool.summary << "\n\n";
  if (!tool.details.empty()) out << tool.details << "\n\n";
  out << "Options:\n" << visible << "\n";
  if (!tool.examples.empty()) {
    out << "Examples:\n";
    for (const auto& example : tool.examples) out << "  " << example << "\n";
    out << "\n";
  }
  out << kExitCodesLine;
  return out.str();
}

// Help and version are the only things a tool prints through iostreams; a failed write (stdout on a
// full disk or a closed pipe) is an I/O error, not success.
int print_to_stdout(const Tool& tool, const std::string& text) {
  std::cout << text;
  std::cout.flush();
  if (!std::cout) {
    std::cerr << tool.name << ": I/O error: cannot write to stdout\n";
    return kInternal;
  }
  return kSuccess;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool Context::progress() const {
  return !quiet && ::isatty(STDERR_FILENO) == 1;
}

std::string Context::get(const char* name, std::string fallback) const {
  return vars.count(name) != 0 ? vars[name].as<std::string>() : fallback;
}

bool Context::fixed_clock() const {
  const char* env = std::getenv("MF_FIXED_CLOCK");
  return vars.count("fixed-clock") != 0 || (env != nullptr && std::string_view(env) == "1");
}

std::string Context::store_dir() const {
  const char* env = std::getenv("MF_STORE");
  return get("store", env != nullptr ? env : "");
}

std::vector<std::string> Context::positionals() const {
  if (tool.positional.empty() || vars.count(tool.positional) == 0) return {};
  return vars[tool.positional].as<std::vector<std::string>>();
}

std::string version_line(const std::string& name) {
  return name + " " + MF_VERSION + " (build " + MF_BUILD_ID + ")";
}

int usage_error(const Tool& tool, std::string_view what) {
  std::cerr << tool.name << ": usage error: " << what << "\nTry '" << tool.name << " --help'.\n";
  return kRejected;
}

int report(const Tool& tool, const diag::Diagnostics& ds, std::string_view source) {
  int code = kRejected;
  for (const auto& d : ds) {
    std::cerr << tool.name << ": " << diag::render_text(d, source) << "\n";
    if (starts_with(d.code, "MF-I") || starts_with(d.code, "MF-O")) code = kInternal;
  }
  return code;
}

int not_built(const Tool& tool, std::string_view what) {
  std::cerr << tool.name << ": " << what << " is not built yet\n";
  return kRejected;
}

int run(int argc, char** argv, const Tool& tool, po::options_description options,
        const std::function<int(Context&)>& body) {
  po::options_description visible(100, 50);
  po::options_description all;
  // Flattened rather than added as a group: Boost prints a blank line before every group.
  for (const auto& option : options.options()) {
    visible.add(option);
    all.add(option);
  }
  po::options_description common;
  common.add_options()                                         //
      ("quiet,q", "silence progress output on stderr")         //
      ("help,h", "print this help and exit")                   //
      ("version", "print the version and build id and exit");  //
  for (const auto& option : common.options()) {
    visible.add(option);
    all.add(option);
  }

  po::positional_options_description positional;
  if (!tool.positional.empty()) {
    positional.add(tool.positional.c_str(), -1);
    if (options.find_nothrow(tool.positional, false) == nullptr) {
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
    if (vars.count("help") != 0) return print_to_stdout(tool, help_text(tool, visible));
    if (vars.count("version") != 0) return print_to_stdout(tool, version_line(tool.name) + "\n");
    po::notify(vars);
  } catch (const po::error& e) {
    return usage_error(tool, e.what());
  }

  Context context{tool, vars, vars.count("quiet") != 0};
  try {
    return body(context);
  } catch (const std::bad_alloc&) {
    std::cerr << tool.name << ": internal error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << tool.name << ": internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << tool.name << ": internal error: unknown exception\n";
  }
  return kInternal;
}

namespace {
std::atomic<bool> g_cancelled{false};
extern "C" void on_cancel_signal(int) {
  g_cancelled.store(true);
}
}  // namespace

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
