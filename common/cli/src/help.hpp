// What a tool's declarations render to: --help (the overview, or one subcommand's), the man page
// and the candidates of shell completion. Internal to mf_cli; run() calls them.
#pragma once

#include <string>
#include <vector>

#include "mf/cli/cli.hpp"

namespace mf::cli {

struct Help {
  using Rule = Options::Rule;
  // The declared options, then the three run() adds to every tool.
  static std::vector<Rule> options(const Options& declared);
};

// The subcommands: Tool::command_lines, Tool::commands, then those Decl::commands name.
std::vector<std::string> subcommands(const Tool& tool, const std::vector<Help::Rule>& options);

// `TOOL --help` (command empty) or `TOOL COMMAND --help`; every line at most 80 columns.
std::string help_text(const Tool& tool, const std::vector<Help::Rule>& options,
                      const std::string& command);

// The man page (roff, section 1).
std::string man_page(const Tool& tool, const std::vector<Help::Rule>& options);

// `TOOL --complete WORD... CURRENT`: the words after the program name, the last being completed.
// One candidate a line; ":files PREFIX" and ":dirs" ask the shell for file or directory names
// (after PREFIX, which the candidate keeps).
std::string completions(const Tool& tool, const std::vector<Help::Rule>& options,
                        const std::vector<std::string>& words);

}  // namespace mf::cli
