//! The exit codes, documented here, in README.md and in `--help`.

/// No concern requires revision at or above `--fail-on`.
pub const PASS: u8 = 0;
/// At least one concern requires revision at or above `--fail-on`.
pub const REVISE: u8 = 1;
/// Usage or input error: bad flags, no spec, a directory, binary or oversized input.
pub const USAGE: u8 = 2;
/// The run could not complete (a role failed, the verdict is incomplete, or
/// stored data could not be read or written).
pub const INCOMPLETE: u8 = 3;

/// Standard output closed before the report was written and the verdict is
/// not known (128 + SIGPIPE, the shell convention). A run whose verdict is
/// known exits with the verdict's code even when stdout is closed.
pub const BROKEN_PIPE: u8 = 141;
