//! What a phase derives from a spec, kept for the few specs seen last and
//! shared by every thread: the evaluators' evidence, the normalised lines
//! of the lexicon, the technologies detected. A spec is known by its
//! SHA-256 and its number of lines, so two parses of one text share the
//! value. A batch review holds a few specs at once (one per worker); an
//! older spec's value is only computed again if asked for again.

use crate::spec::Spec;
use std::sync::{Arc, Mutex};

/// A spec as the cache knows it.
type SpecId = (String, usize);

#[derive(Debug)]
pub struct PerSpec<T> {
    /// How many specs are kept.
    kept: usize,
    entries: Mutex<Vec<(SpecId, Arc<T>)>>,
}

impl<T> PerSpec<T> {
    pub const fn new(kept: usize) -> PerSpec<T> {
        PerSpec {
            kept,
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The value for `spec`, made by `make` the first time it is asked for.
    /// `make` runs with the cache unlocked, so other specs are served
    /// meanwhile; two threads asking for a new spec at once may both make
    /// it, and the first one kept wins.
    pub fn get(&self, spec: &Spec, make: impl FnOnce() -> T) -> Arc<T> {
        if let Some(v) = self.find(spec) {
            return v;
        }
        let made = Arc::new(make());
        let mut entries = self.lock();
        if let Some((_, v)) = entries.iter().find(|(id, _)| is(id, spec)) {
            return v.clone();
        }
        if entries.len() >= self.kept.max(1) {
            entries.remove(0);
        }
        entries.push(((spec.sha256.clone(), spec.lines.len()), made.clone()));
        made
    }

    fn find(&self, spec: &Spec) -> Option<Arc<T>> {
        let entries = self.lock();
        entries
            .iter()
            .find(|(id, _)| is(id, spec))
            .map(|(_, v)| v.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(SpecId, Arc<T>)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn is(id: &SpecId, spec: &Spec) -> bool {
    id.0 == spec.sha256 && id.1 == spec.lines.len()
}

impl<T> Clone for PerSpec<T> {
    /// A clone starts empty.
    fn clone(&self) -> PerSpec<T> {
        PerSpec::new(self.kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_gets_its_own_value_and_only_the_last_few_are_kept() {
        let cache: PerSpec<String> = PerSpec::new(2);
        let spec = |t: &str| Spec::parse(None, format!("# {t}\n\nBody.\n"));
        let (a, b, c) = (spec("a"), spec("b"), spec("c"));
        let first = cache.get(&a, || "a".to_string());
        // Asked again, the same value, not made again.
        assert!(Arc::ptr_eq(&first, &cache.get(&a, || unreachable!())));
        // Another parse of the same text is the same spec.
        assert_eq!(*cache.get(&spec("a"), || unreachable!()), "a");
        assert_eq!(*cache.get(&b, || "b".to_string()), "b");
        assert_eq!(*cache.get(&c, || "c".to_string()), "c");
        // Two kept: `a`, the oldest, was dropped and is made again.
        assert_eq!(cache.entries.lock().unwrap().len(), 2);
        assert_eq!(*cache.get(&a, || "a again".to_string()), "a again");
        assert_eq!(*cache.get(&c, || unreachable!()), "c");
    }
}
