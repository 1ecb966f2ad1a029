// Stable diagnostic codes shared by every tool. Each is listed with its meaning in
// docs/diagnostics.md; grep a code to find where it is raised.
#pragma once

namespace mf::diag::codes {

// Input admission and parsing (MF-S family, shared with the harness compiler).
inline constexpr const char* kTooLarge = "MF-S003";        // document over the size limit
inline constexpr const char* kNotUtf8 = "MF-S004";         // invalid UTF-8 (raw or via escapes)
inline constexpr const char* kDuplicateKey = "MF-S006";    // object key repeated
inline constexpr const char* kLimitExceeded = "MF-S010";   // depth, entry or number-lexeme limit
inline constexpr const char* kMalformed = "MF-S011";       // malformed JSON, non-finite number
inline constexpr const char* kNotObject = "MF-S012";       // top level is not an object
inline constexpr const char* kMissing = "MF-S013";         // input file missing or unreadable
inline constexpr const char* kNotRegularFile = "MF-S014";  // input is not a regular file
inline constexpr const char* kSchema = "MF-S020";          // value has the wrong type or range
inline constexpr const char* kUnknownField = "MF-S021";    // field not in the format
inline constexpr const char* kBadIdentifier = "MF-S022";   // empty or malformed identifier
inline constexpr const char* kBadBudget = "MF-S024";       // budget bounds violated
inline constexpr const char* kBadPointer = "MF-S030";      // malformed or unresolvable JSON pointer

// Harness compiler: request, parse and schema (MF-S), resolution (MF-R), graph (MF-G), capability
// (MF-C), artifact (MF-A) and lowering (MF-L) phases (SPEC §5.2).
inline constexpr const char* kUnsupportedFormat = "MF-S005";  // source is neither YAML nor JSON
inline constexpr const char* kYamlAlias = "MF-S007";          // YAML anchor or alias
inline constexpr const char* kYamlUnsafe =
    "MF-S008";  // tag, merge key, non-string key, complex key
inline constexpr const char* kYamlMultiDoc = "MF-S009";       // more than one YAML document
inline constexpr const char* kOutputDirMissing = "MF-S017";   // --out DIR does not exist
inline constexpr const char* kBadRequest = "MF-S018";         // compile request options invalid
inline constexpr const char* kBadToolRef = "MF-S023";         // tool_ref is not exactly id@N
inline constexpr const char* kBadContext = "MF-S025";         // context policy out of bounds
inline constexpr const char* kSecretValue = "MF-S026";        // a value looks like a secret
inline constexpr const char* kHarnessIdMismatch = "MF-S027";  // harness_id != --expect-harness-id
inline constexpr const char* kStageOutOfScope = "MF-S028";    // --stage not in stage_scope
inline constexpr const char* kLegalTerminalMissing = "MF-S029";  // a legal terminal has no node
inline constexpr const char* kUnknownProfile = "MF-R001";
inline constexpr const char* kUnknownTool = "MF-R002";          // tool_ref not in any catalog
inline constexpr const char* kCatalogIdentity = "MF-R003";      // claimed descriptor hash differs
inline constexpr const char* kMalformedDescriptor = "MF-R004";  // catalog entry ill-formed
inline constexpr const char* kDuplicateBinding = "MF-R005";     // tool bound twice
inline constexpr const char* kDuplicateModelName = "MF-R006";   // model-facing name bound twice
inline constexpr const char* kUnsupportedSchema = "MF-R007";    // keyword outside the subset
inline constexpr const char* kMalformedProfile = "MF-R010";
inline constexpr const char* kUnknownPrerequisite = "MF-G001";
inline constexpr const char* kSelfPrerequisite = "MF-G002";
inline constexpr const char* kDuplicatePrerequisite = "MF-G003";
inline constexpr const char* kCycle = "MF-G004";
inline constexpr const char* kUnreachableNode = "MF-G005";      // depends on a cycle
inline constexpr const char* kUnreachableTerminal = "MF-G006";  // terminal depends on a cycle
inline constexpr const char* kUnreachableRequired = "MF-G007";  // required node depends on a cycle
inline constexpr const char* kRequiredTerminal = "MF-G008";     // terminal marked required
inline constexpr const char* kIllegalTerminal = "MF-G009";      // terminal not in --legal-terminals
inline constexpr const char* kDuplicateTerminal = "MF-G010";
inline constexpr const char* kNoTerminal = "MF-G011";
inline constexpr const char* kBadArgumentMatch = "MF-G012";
inline constexpr const char* kTerminalPrerequisite = "MF-G013";
inline constexpr const char* kCapabilityNotGranted = "MF-C001";
inline constexpr const char* kUndeclaredProduced = "MF-A001";
inline constexpr const char* kToolCannotProduce = "MF-A002";  // terminal/read-only tool produces
inline constexpr const char* kUnknownArtifactTerminal = "MF-A003";
inline constexpr const char* kArtifactNoProducer = "MF-A004";
inline constexpr const char* kArtifactNotGated = "MF-A005";  // producer not before the terminal
inline constexpr const char* kDuplicateArtifact = "MF-A006";
inline constexpr const char* kUndeclaredRequired = "MF-A007";
inline constexpr const char* kLoweringInvariant = "MF-L001";
inline constexpr const char* kPlanInvalid = "MF-L002";  // a loaded plan breaks an invariant
inline constexpr const char* kSourceHash = "MF-L003";   // source_sha256 does not verify
inline constexpr const char* kPlanHash = "MF-L004";     // compiled_sha256 does not verify
inline constexpr const char* kUsage = "MF-U001";        // command-line usage error

// Output publication (MF-O family).
inline constexpr const char* kBadOutputPath = "MF-O001";
inline constexpr const char* kDiagnosticsWriteFailed = "MF-O002";
inline constexpr const char* kWriteFailed = "MF-O003";
inline constexpr const char* kClobber = "MF-O004";  // existing output holds different bytes

// Internal (MF-I) and report truncation (MF-D).
inline constexpr const char* kInternal = "MF-I001";
inline constexpr const char* kTruncated = "MF-D001";

// Trace integrity (MF-E family): rules mf-replay checks on a JSONL trace (SPEC §3.3, §7). Each
// names the 1-based line of the first offending event. E013 and E014 mean "incomplete", the rest
// "corrupt".
inline constexpr const char* kTraceMalformedLine = "MF-E001";    // not a strict JSON object
inline constexpr const char* kTraceBadEnvelope = "MF-E002";      // v, run_id, seq, event, t_ms
inline constexpr const char* kTraceNotCanonical = "MF-E003";     // line is not RFC 8785 bytes
inline constexpr const char* kTraceNoRunStarted = "MF-E004";     // first event is not run_started
inline constexpr const char* kTraceForeignRunId = "MF-E005";     // run_id differs from line 1
inline constexpr const char* kTraceSeqBroken = "MF-E006";        // seq gap or duplicate
inline constexpr const char* kTraceUnknownEvent = "MF-E007";     // event type not in SPEC §3.3
inline constexpr const char* kTraceSecondTerminal = "MF-E008";   // a second terminal event
inline constexpr const char* kTraceAfterTerminal = "MF-E009";    // an event after the terminal
inline constexpr const char* kTraceUnpairedTool = "MF-E010";     // tool_completed without its call
inline constexpr const char* kTraceDuplicateCallId = "MF-E011";  // call_id already open
inline constexpr const char* kTraceBadPayload = "MF-E012";       // event payload ill-formed
inline constexpr const char* kTraceTruncated = "MF-E013";        // last line has no '\n'
inline constexpr const char* kTraceNoTerminal = "MF-E014";       // ends without a terminal event

// Tool confinement and source reading refusals (MF-T family: mf-toolread, later the tool pack).
inline constexpr const char* kPathNotRelative = "MF-T001";  // empty, absolute or unusable path
inline constexpr const char* kPathEscapes = "MF-T002";  // `..`/symlink leaves the root, magic link
inline constexpr const char* kIsDirectory = "MF-T003";  // a directory where a file is read
inline constexpr const char* kWrongFileType = "MF-T004";   // not a regular file / not a directory
inline constexpr const char* kFileTooLarge = "MF-T005";    // file over the 1 MiB limit
inline constexpr const char* kBadLineRange = "MF-T006";    // start < 1, end < start, start past EOF
inline constexpr const char* kRangeTooLong = "MF-T007";    // more than 200 lines requested
inline constexpr const char* kContentNotUtf8 = "MF-T008";  // file content is not valid UTF-8
inline constexpr const char* kBadRoot = "MF-T009";         // root missing or not a directory
inline constexpr const char* kNotFound = "MF-T010";        // target missing or not permitted
inline constexpr const char* kBadSearch = "MF-T011";       // empty/multi-line query, zero limit

// Evaluation (MF-V family: mf-eval suites and reports).
inline constexpr const char* kDuplicateCaseId = "MF-V001";  // a case id repeated in a suite/report

// Content-addressed store (MF-K family: common/store, mf-store; docs/store.md).
inline constexpr const char* kStoreMissingObject = "MF-K001";   // digest (or ref) not in the store
inline constexpr const char* kStoreDigestMismatch = "MF-K002";  // bytes do not hash to the claim
inline constexpr const char* kStoreCorrupt = "MF-K003";       // stored bytes no longer hash to key
inline constexpr const char* kStoreBadRef = "MF-K004";        // ref name fails valid_ref_name
inline constexpr const char* kStoreAbsent = "MF-K005";        // no store at DIR (read-only open)
inline constexpr const char* kStoreInputChanged = "MF-K006";  // input file changed while stored
inline constexpr const char* kStoreLmdb = "MF-K007";  // LMDB/filesystem error, write to read-only
inline constexpr const char* kStoreBadExport = "MF-K008";  // malformed export stream line

}  // namespace mf::diag::codes
