//! The JSON verdict: exactly one object, `schema_version` 1.

use crate::verdict::Verdict;
use std::io::{self, Write};

pub fn write(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, verdict)?;
    writeln!(out)
}
