// The compiled-in catalog, written as a catalog document so it goes through the same loader (and
// the same digests) as any third-party catalog. Parameter schemas and descriptions follow Pi 0.79's
// coding tools; the builtin.request/workspace/shell/artifact/terminal tools after the two artifact
// tools follow the facts of Millforge's built-in descriptors (docs/tools.md, "Millforge
// built-ins"). builtin_catalog_json(legal_terminals) adds one terminal control per legal terminal
// result, as Millforge's Pi-compatible catalog configures them.
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <map>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/reader.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::tools {
namespace {

constexpr const char* kBuiltinCatalog = R"json({
  "schema_version": "1.0",
  "kind": "millforge_tool_catalog",
  "tools": [
    {
      "tool_id": "builtin.pi_compat.read", "version": 1, "model_tool_name": "read",
      "description": "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.",
      "input_schema": {"type": "object", "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"}},
        "required": ["path"]},
      "required_capabilities": ["unrestricted.filesystem.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 131072, "max_summary_bytes": 8192, "redact_secrets": false}
    },
    {
      "tool_id": "builtin.pi_compat.bash", "version": 1, "model_tool_name": "bash",
      "description": "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.",
      "input_schema": {"type": "object", "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}},
        "required": ["command"]},
      "required_capabilities": ["unrestricted.process.execute"],
      "side_effect_class": "process_execution", "idempotency": "non_idempotent",
      "timeout_ms": 1800000,
      "output_policy": {"max_output_bytes": 131072, "max_summary_bytes": 8192, "redact_secrets": false}
    },
    {
      "tool_id": "builtin.pi_compat.edit", "version": 1, "model_tool_name": "edit",
      "description": "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
      "input_schema": {"type": "object", "additionalProperties": false, "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "edits": {"type": "array", "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
          "items": {"type": "object", "additionalProperties": false, "properties": {
            "oldText": {"type": "string", "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},
            "newText": {"type": "string", "description": "Replacement text for this targeted edit."}},
            "required": ["oldText", "newText"]}}},
        "required": ["path", "edits"]},
      "required_capabilities": ["unrestricted.filesystem.write"],
      "side_effect_class": "workspace_write", "idempotency": "non_idempotent",
      "output_policy": {"max_output_bytes": 131072, "max_summary_bytes": 8192, "redact_secrets": false}
    },
    {
      "tool_id": "builtin.pi_compat.write", "version": 1, "model_tool_name": "write",
      "description": "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
      "input_schema": {"type": "object", "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"}},
        "required": ["path", "content"]},
      "required_capabilities": ["unrestricted.filesystem.write"],
      "side_effect_class": "workspace_write", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 131072, "max_summary_bytes": 8192, "redact_secrets": false}
    },
    {
      "tool_id": "builtin.pi_compat.grep", "version": 1, "model_tool_name": "grep",
      "description": "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.",
      "input_schema": {"type": "object", "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
        "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
        "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
        "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}},
        "required": ["pattern"]},
      "required_capabilities": ["unrestricted.filesystem.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 131072, "max_summary_bytes": 8192, "redact_secrets": false}
    },
    {
      "tool_id": "builtin.pi_compat.find", "version": 1, "model_tool_name": "find",
      "description": "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).",
      "input_schema": {"type": "object", "properties": {
        "pattern": {"type": "string", "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}},
        "required": ["pattern"]},
      "required_capabilities": ["unrestricted.filesystem.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 131072, "max_summary_bytes": 8192, "redact_secrets": false}
    },
    {
      "tool_id": "builtin.pi_compat.ls", "version": 1, "model_tool_name": "ls",
      "description": "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).",
      "input_schema": {"type": "object", "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}}},
      "required_capabilities": ["unrestricted.filesystem.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 131072, "max_summary_bytes": 8192, "redact_secrets": false}
    },
    {
      "tool_id": "builtin.pi_compat.submit", "version": 1, "model_tool_name": "submit",
      "description": "Finish the task successfully: submit the terminal result COMPLETE with a summary of what was done.",
      "input_schema": {"type": "object", "properties": {
        "terminal_result": {"enum": ["COMPLETE"]},
        "summary": {"type": "string", "minLength": 1, "description": "What was done and where the results are"}},
        "required": ["terminal_result", "summary"]},
      "required_capabilities": ["terminal.intent"],
      "side_effect_class": "terminal", "idempotency": "idempotent", "timeout_ms": 30000
    },
    {
      "tool_id": "builtin.pi_compat.block", "version": 1, "model_tool_name": "block",
      "description": "Stop because the task cannot be completed: submit the terminal result BLOCKED with a summary of the blocker.",
      "input_schema": {"type": "object", "properties": {
        "terminal_result": {"enum": ["BLOCKED"]},
        "summary": {"type": "string", "minLength": 1, "description": "What blocks the task"}},
        "required": ["terminal_result", "summary"]},
      "required_capabilities": ["terminal.intent"],
      "side_effect_class": "terminal", "idempotency": "idempotent", "timeout_ms": 30000
    },
    {
      "tool_id": "builtin.pi_compat.reject", "version": 1, "model_tool_name": "reject",
      "description": "Refuse the task: submit the terminal result REJECTED with a summary of the reason.",
      "input_schema": {"type": "object", "properties": {
        "terminal_result": {"enum": ["REJECTED"]},
        "summary": {"type": "string", "minLength": 1, "description": "Why the task is refused"}},
        "required": ["terminal_result", "summary"]},
      "required_capabilities": ["terminal.intent"],
      "side_effect_class": "terminal", "idempotency": "idempotent", "timeout_ms": 30000
    },
    {
      "tool_id": "builtin.artifact.read", "version": 1, "model_tool_name": "read_artifact",
      "description": "Read a run artifact by its id.",
      "input_schema": {"type": "object", "properties": {
        "artifact_id": {"type": "string", "minLength": 1, "maxLength": 128, "description": "The artifact to read"}},
        "required": ["artifact_id"]},
      "required_capabilities": ["artifact.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent"
    },
    {
      "tool_id": "builtin.artifact.write", "version": 1, "model_tool_name": "write_artifact",
      "description": "Write (or replace) a run artifact with the given text content.",
      "input_schema": {"type": "object", "properties": {
        "artifact_id": {"type": "string", "minLength": 1, "maxLength": 128, "description": "The artifact to write"},
        "content": {"type": "string", "description": "The artifact's full text"}},
        "required": ["artifact_id", "content"]},
      "required_capabilities": ["artifact.write"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent"
    },
    {
      "tool_id": "builtin.request.inspect", "version": 1, "model_tool_name": "inspect_request",
      "produced_artifact_ids": [],
      "description": "Show the request this run works on: its instruction and its context object.",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "instruction": {"type": "string"}, "context": {"type": "object", "additionalProperties": true}},
        "required": ["status", "summary", "instruction", "context"]},
      "required_capabilities": ["request.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.request.read_requirements", "version": 1, "model_tool_name": "read_request_requirements",
      "produced_artifact_ids": [],
      "description": "Read the requirements the request states (its context.requirements).",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"}, "requirements": true},
        "required": ["status", "summary", "requirements"]},
      "required_capabilities": ["request.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.workspace.read_file", "version": 1, "model_tool_name": "read_workspace_file",
      "produced_artifact_ids": [],
      "description": "Read a text file of the workspace, up to max_bytes bytes (default 32768, at most 1048576).",
      "input_schema": {"type": "object", "properties": {
        "path": {"type": "string", "minLength": 1, "description": "The file, relative to the workspace root"},
        "max_bytes": {"type": "integer", "minimum": 1, "maximum": 1048576, "description": "Read at most this many bytes"}},
        "required": ["path"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "path": {"type": "string"}, "content": {"type": "string"},
        "truncated": {"type": "boolean"}, "size": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "path", "content", "truncated", "size"]},
      "required_capabilities": ["workspace.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.workspace.apply_patch", "version": 1, "model_tool_name": "apply_workspace_patch",
      "produced_artifact_ids": [],
      "description": "Apply a unified diff (---/+++ file headers, @@ hunks with context lines) to files of the workspace. Every hunk must apply, or nothing is written.",
      "input_schema": {"type": "object", "properties": {
        "patch": {"type": "string", "minLength": 1, "maxLength": 1048576, "description": "The unified diff; paths relative to the workspace root, a/ and b/ prefixes allowed"}},
        "required": ["patch"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "changed_paths": {"type": "array", "items": {"type": "string"}},
        "hunks": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "changed_paths", "hunks"]},
      "required_capabilities": ["workspace.write"],
      "side_effect_class": "workspace_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.workspace.list_files", "version": 1, "model_tool_name": "list_workspace_files",
      "produced_artifact_ids": [],
      "description": "List the regular files below a directory of the workspace, in path order, optionally only those whose path or file name matches a glob; at most max_results paths (default 200, at most 1000).",
      "input_schema": {"type": "object", "properties": {
        "root": {"type": "string", "minLength": 1, "description": "The directory to list, relative to the workspace root (\".\" for the whole workspace)"},
        "glob": {"type": "string", "description": "Keep only files whose workspace-relative path or file name matches this glob, e.g. '*.py' or 'src/**/*.h' (default: every file)"},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "List at most this many paths"}},
        "required": ["root"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "paths": {"type": "array", "items": {"type": "string"}}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "paths", "truncated"]},
      "required_capabilities": ["workspace.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.workspace.search_text", "version": 1, "model_tool_name": "search_workspace_text",
      "produced_artifact_ids": [],
      "description": "Find the lines of workspace files that contain a literal text; at most max_results matching lines (default 200, at most 1000), each with its file, line number and the line's first 512 characters.",
      "input_schema": {"type": "object", "properties": {
        "query": {"type": "string", "minLength": 1, "description": "The text to find, matched literally and case-sensitively within one line"},
        "root": {"type": "string", "minLength": 1, "description": "The directory to search, relative to the workspace root (default: the whole workspace)"},
        "glob": {"type": "string", "description": "Search only files whose workspace-relative path or file name matches this glob, e.g. '*.py'"},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Return at most this many matching lines"}},
        "required": ["query"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "matches": {"type": "array", "items": {"type": "object", "properties": {
          "path": {"type": "string"}, "line": {"type": "integer", "minimum": 1}, "snippet": {"type": "string"}},
          "required": ["path", "line", "snippet"]}},
        "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "matches", "truncated"]},
      "required_capabilities": ["workspace.read", "workspace.search"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.workspace.write_file", "version": 1, "model_tool_name": "write_workspace_file",
      "produced_artifact_ids": [],
      "description": "Write a whole file of the workspace atomically (created with its directories, or replaced). With expected_sha256, an existing file is replaced only while its content still has that SHA-256.",
      "input_schema": {"type": "object", "properties": {
        "path": {"type": "string", "minLength": 1, "description": "The file, relative to the workspace root"},
        "content": {"type": "string", "description": "The file's full new content"},
        "expected_sha256": {"type": "string", "description": "The SHA-256 (lowercase hex) the existing file must have"}},
        "required": ["path", "content"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "path": {"type": "string"}, "content_sha256": {"type": "string"}},
        "required": ["status", "summary", "path", "content_sha256"]},
      "required_capabilities": ["workspace.write"],
      "side_effect_class": "workspace_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.workspace.read_diff", "version": 1, "model_tool_name": "read_workspace_diff",
      "produced_artifact_ids": [],
      "description": "Show the workspace's uncommitted changes as git diff prints them (the work tree against git's index), for the whole workspace or the given paths, up to max_bytes bytes (default 32768, at most 1048576).",
      "input_schema": {"type": "object", "properties": {
        "paths": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Only these files or directories, relative to the workspace root"},
        "max_bytes": {"type": "integer", "minimum": 1, "maximum": 1048576, "description": "Show at most this many bytes of the diff"}}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "diff": {"type": "string"}, "truncated": {"type": "boolean"}, "diff_sha256": {"type": "string"}},
        "required": ["status", "summary", "diff", "truncated", "diff_sha256"]},
      "required_capabilities": ["workspace.diff.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.shell.run_tests", "version": 1, "model_tool_name": "run_test_profile",
      "produced_artifact_ids": [],
      "description": "Run one of the test profiles the request defines (context.shell_profiles) in the workspace; success when it exits 0.",
      "input_schema": {"type": "object", "properties": {
        "profile": {"type": "string", "minLength": 1, "maxLength": 128, "description": "The profile's name, a key of the request's context.shell_profiles"}},
        "required": ["profile"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "profile": {"type": "string"}, "exit_code": {"type": ["integer", "null"]},
        "output": {"type": "string"}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "profile", "exit_code", "output", "truncated"]},
      "required_capabilities": ["process.test"],
      "side_effect_class": "process_execution", "idempotency": "idempotent_with_key",
      "timeout_ms": 1800000,
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.shell.run_static_check", "version": 1, "model_tool_name": "run_static_check_profile",
      "produced_artifact_ids": [],
      "description": "Run one of the static-check profiles the request defines (context.shell_profiles) in the workspace; success when it exits 0.",
      "input_schema": {"type": "object", "properties": {
        "profile": {"type": "string", "minLength": 1, "maxLength": 128, "description": "The profile's name, a key of the request's context.shell_profiles"}},
        "required": ["profile"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "profile": {"type": "string"}, "exit_code": {"type": ["integer", "null"]},
        "output": {"type": "string"}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "profile", "exit_code", "output", "truncated"]},
      "required_capabilities": ["process.static_check"],
      "side_effect_class": "process_execution", "idempotency": "idempotent_with_key",
      "timeout_ms": 1800000,
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.read_plan", "version": 1, "model_tool_name": "read_plan_artifact",
      "produced_artifact_ids": [],
      "description": "Read the plan artifact (the planner's plan), up to 32768 bytes.",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string", "enum": ["plan"]}, "content": {"type": "string"},
        "content_sha256": {"type": "string"}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "artifact_id", "content", "content_sha256", "truncated"]},
      "required_capabilities": ["artifact.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.read_patch_summary", "version": 1, "model_tool_name": "read_patch_summary_artifact",
      "produced_artifact_ids": [],
      "description": "Read the patch_summary artifact (what the builder's patch changes), up to 32768 bytes.",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string", "enum": ["patch_summary"]}, "content": {"type": "string"},
        "content_sha256": {"type": "string"}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "artifact_id", "content", "content_sha256", "truncated"]},
      "required_capabilities": ["artifact.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.read_test_results", "version": 1, "model_tool_name": "read_test_results_artifact",
      "produced_artifact_ids": [],
      "description": "Read the test_results artifact (the builder's test and check results), up to 32768 bytes.",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string", "enum": ["test_results"]}, "content": {"type": "string"},
        "content_sha256": {"type": "string"}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "artifact_id", "content", "content_sha256", "truncated"]},
      "required_capabilities": ["artifact.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.read_workspace_diff", "version": 1, "model_tool_name": "read_workspace_diff_artifact",
      "produced_artifact_ids": [],
      "description": "Read the workspace_diff artifact (the workspace diff the builder recorded), up to 32768 bytes.",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string", "enum": ["workspace_diff"]}, "content": {"type": "string"},
        "content_sha256": {"type": "string"}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "artifact_id", "content", "content_sha256", "truncated"]},
      "required_capabilities": ["artifact.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.read_checker_verdict", "version": 1, "model_tool_name": "read_checker_verdict_artifact",
      "produced_artifact_ids": [],
      "description": "Read the checker_verdict artifact (the checker's verdict), up to 32768 bytes.",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string", "enum": ["checker_verdict"]}, "content": {"type": "string"},
        "content_sha256": {"type": "string"}, "truncated": {"type": "boolean"}},
        "required": ["status", "summary", "artifact_id", "content", "content_sha256", "truncated"]},
      "required_capabilities": ["artifact.read"],
      "side_effect_class": "read_only", "idempotency": "idempotent",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.write_plan", "version": 1, "model_tool_name": "write_plan_artifact",
      "produced_artifact_ids": ["plan"],
      "description": "Write the plan artifact.",
      "input_schema": {"type": "object", "properties": {
        "plan": {"type": "string", "description": "The plan's full text"}},
        "required": ["plan"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "artifact_id", "bytes"]},
      "required_capabilities": ["artifact.write"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.write_patch_summary", "version": 1, "model_tool_name": "write_patch_summary_artifact",
      "produced_artifact_ids": ["patch_summary"],
      "description": "Write the patch_summary artifact.",
      "input_schema": {"type": "object", "properties": {
        "summary": {"type": "string", "description": "What the patch changes and why"}},
        "required": ["summary"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "artifact_id", "bytes"]},
      "required_capabilities": ["artifact.write"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.write_test_results", "version": 1, "model_tool_name": "write_test_results_artifact",
      "produced_artifact_ids": ["test_results"],
      "description": "Write the test_results artifact.",
      "input_schema": {"type": "object", "properties": {
        "results": {"type": "string", "description": "The test and check results"}},
        "required": ["results"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "artifact_id", "bytes"]},
      "required_capabilities": ["artifact.write"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.write_workspace_diff", "version": 1, "model_tool_name": "write_workspace_diff_artifact",
      "produced_artifact_ids": ["workspace_diff"],
      "description": "Record the workspace's current uncommitted changes (git diff of the whole workspace, up to 32768 bytes) as the workspace_diff artifact.",
      "input_schema": {"type": "object", "properties": {}},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "artifact_id", "bytes"]},
      "required_capabilities": ["artifact.write", "workspace.diff.read"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.write_checker_verdict", "version": 1, "model_tool_name": "write_checker_verdict_artifact",
      "produced_artifact_ids": ["checker_verdict"],
      "description": "Write the checker_verdict artifact.",
      "input_schema": {"type": "object", "properties": {
        "verdict": {"type": "string", "description": "The checker's verdict, in full"}},
        "required": ["verdict"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "artifact_id", "bytes"]},
      "required_capabilities": ["artifact.write"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.write_arbiter_verdict", "version": 1, "model_tool_name": "write_arbiter_verdict_artifact",
      "produced_artifact_ids": ["arbiter_verdict"],
      "description": "Write the arbiter_verdict artifact.",
      "input_schema": {"type": "object", "properties": {
        "verdict": {"type": "string", "description": "The arbiter's verdict, in full"}},
        "required": ["verdict"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "artifact_id", "bytes"]},
      "required_capabilities": ["artifact.write"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.artifact.write_verdict", "version": 1, "model_tool_name": "write_verdict_artifact",
      "produced_artifact_ids": ["arbiter_verdict", "checker_verdict"],
      "description": "Write a verdict artifact: the one this step produces, or the one artifact_id names.",
      "input_schema": {"type": "object", "properties": {
        "verdict": {"type": "string", "description": "The verdict's full text"},
        "artifact_id": {"enum": ["checker_verdict", "arbiter_verdict"], "description": "Which verdict, when this step produces more than one"}},
        "required": ["verdict"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "artifact_id": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
        "required": ["status", "summary", "artifact_id", "bytes"]},
      "required_capabilities": ["artifact.write"],
      "side_effect_class": "artifact_write", "idempotency": "idempotent_with_key",
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.terminal.submit", "version": 1, "model_tool_name": "submit_terminal_intent",
      "produced_artifact_ids": [],
      "description": "Finish this step: submit its terminal result with a summary, optionally naming the artifacts it leaves.",
      "input_schema": {"type": "object", "properties": {
        "terminal_result": {"type": "string", "minLength": 1, "description": "This step's terminal result"},
        "summary": {"type": "string", "description": "What was done"},
        "artifact_refs": {"type": "array", "items": {"type": "string"}, "description": "Ids of artifacts the result rests on; each must exist"}},
        "required": ["terminal_result", "summary"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "terminal_result": {"type": "string"},
        "artifact_refs": {"type": "array", "items": {"type": "string"}}},
        "required": ["status", "summary", "terminal_result"]},
      "required_capabilities": ["terminal.intent"],
      "side_effect_class": "terminal", "idempotency": "non_idempotent", "timeout_ms": 30000,
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.terminal.reject", "version": 1, "model_tool_name": "reject_terminal_intent",
      "produced_artifact_ids": [],
      "description": "Refuse this step: submit its rejecting terminal result with the reason, optionally naming the artifacts it rests on.",
      "input_schema": {"type": "object", "properties": {
        "terminal_result": {"type": "string", "minLength": 1, "description": "This step's rejecting terminal result"},
        "summary": {"type": "string", "description": "Why the work is rejected"},
        "artifact_refs": {"type": "array", "items": {"type": "string"}, "description": "Ids of artifacts the rejection rests on; each must exist"}},
        "required": ["terminal_result", "summary"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "terminal_result": {"type": "string"},
        "artifact_refs": {"type": "array", "items": {"type": "string"}}},
        "required": ["status", "summary", "terminal_result"]},
      "required_capabilities": ["terminal.intent"],
      "side_effect_class": "terminal", "idempotency": "non_idempotent", "timeout_ms": 30000,
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    },
    {
      "tool_id": "builtin.terminal.escalate", "version": 1, "model_tool_name": "escalate_terminal_intent",
      "produced_artifact_ids": [],
      "description": "Hand this step on to a person: submit its escalating terminal result with a summary and the blocker that needs them.",
      "input_schema": {"type": "object", "properties": {
        "terminal_result": {"type": "string", "minLength": 1, "description": "This step's escalating terminal result"},
        "summary": {"type": "string", "description": "What was done so far"},
        "blocker": {"type": "string", "description": "What stops the work and needs a decision"},
        "artifact_refs": {"type": "array", "items": {"type": "string"}, "description": "Ids of artifacts the escalation rests on; each must exist"}},
        "required": ["terminal_result", "summary", "blocker"]},
      "output_schema": {"type": "object", "properties": {
        "status": {"type": "string", "enum": ["success", "soft_failure", "hard_failure"]}, "summary": {"type": "string"},
        "terminal_result": {"type": "string"}, "blocker": {"type": "string"},
        "artifact_refs": {"type": "array", "items": {"type": "string"}}},
        "required": ["status", "summary", "terminal_result", "blocker"]},
      "required_capabilities": ["terminal.intent"],
      "side_effect_class": "terminal", "idempotency": "non_idempotent", "timeout_ms": 30000,
      "output_policy": {"max_output_bytes": 1048576, "max_summary_bytes": 8192, "redact_secrets": true}
    }
  ]
})json";

// Longer tokens are cut to this many bytes and given a digest suffix, so tool ids stay short.
constexpr std::size_t kMaxTerminalToken = 48;
constexpr std::size_t kTerminalTokenPrefix = 39;

json::Value configured_terminal(const std::string& result, const std::string& token) {
  using json::Array;
  using json::Object;
  json::Value summary = Object{{"type", "string"},
                               {"minLength", 1},
                               {"description", "What was done, and why it ends with " + result}};
  return Object{
      {"tool_id", "builtin.pi_compat.terminal." + token},
      {"version", 1},
      {"model_tool_name", "terminal_" + token},
      {"description", "Finish the task with the terminal result " + result +
                          ", giving a summary that is not blank."},
      {"input_schema",
       Object{{"type", "object"},
              {"properties", Object{{"terminal_result", Object{{"enum", Array{result}}}},
                                    {"summary", std::move(summary)}}},
              {"required", Array{"terminal_result", "summary"}}}},
      {"required_capabilities", Array{"terminal.intent"}},
      {"side_effect_class", "terminal"},
      {"idempotency", "non_idempotent"},
      {"timeout_ms", 30000},
      // One implementation serves every configured terminal; the descriptor says which result.
      {"implementation_id", std::string(kConfiguredTerminalImplementation)},
  };
}

}  // namespace

std::string terminal_token(std::string_view result) {
  std::string token(result);
  for (char& c : token) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (token.size() <= kMaxTerminalToken) return token;
  return token.substr(0, kTerminalTokenPrefix) + "_" + hash::sha256_hex(result).substr(0, 8);
}

Result<json::Value> builtin_catalog_json(const std::vector<std::string>& legal_terminals) {
  namespace codes = diag::codes;
  json::Value doc = builtin_catalog_json();
  json::Array& tools = doc.find("tools")->as_array();
  std::map<std::string, std::string> by_token;  // token -> the result that made it
  diag::Diagnostics problems;
  for (const std::string& result : legal_terminals) {
    const std::string token = terminal_token(result);
    const std::string tool_id = "builtin.pi_compat.terminal." + token;
    if (result.empty() || !valid_dotted_id(tool_id) ||
        !valid_model_tool_name("terminal_" + token)) {
      problems.push_back(diag::error(
          codes::kMalformedDescriptor,
          "legal terminal \"" + result +
              "\" cannot name a terminal tool: its lowercase form must be [a-z][a-z0-9_]*"));
      continue;
    }
    const auto [it, added] = by_token.emplace(token, result);
    if (!added) {
      problems.push_back(diag::error(codes::kDuplicateBinding,
                                     "legal terminals \"" + it->second + "\" and \"" + result +
                                         "\" collide: both would be the tool " + tool_id));
      continue;
    }
    tools.push_back(configured_terminal(result, token));
  }
  if (!problems.empty()) return problems;
  // The document must load as any catalog does, so a caller never holds one that the compiler
  // would refuse.
  if (auto loaded = Catalog::from_json(doc); !loaded) return loaded.take_diagnostics();
  return doc;
}

const json::Value& builtin_catalog_json() {
  static const json::Value doc = [] {
    auto v = json::parse(kBuiltinCatalog);
    if (!v) {
      std::cerr << "internal error: the built-in catalog does not parse\n";
      std::abort();
    }
    return std::move(v).value();
  }();
  return doc;
}

const Catalog& builtin_catalog() {
  static const Catalog catalog = [] {
    auto c = Catalog::from_json(builtin_catalog_json());
    if (!c) {
      // One write of the whole line (std::cerr is unbuffered: one insertion, one write).
      std::cerr << "internal error: the built-in catalog is invalid: " +
                       c.diagnostics().front().message + "\n";
      std::abort();
    }
    return std::move(c).value();
  }();
  return catalog;
}

}  // namespace mf::tools
