//! An info object (`MPI_Info`) as data.

/// An info object: keys in insertion order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InfoEntry {
    /// (key, value) pairs; keys are unique.
    pub pairs: Vec<(String, String)>,
}

impl InfoEntry {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` to `value` (replacing its value if present).
    pub fn set(&mut self, key: &str, value: &str) {
        match self.pairs.iter_mut().find(|(k, _)| k == key) {
            Some(p) => p.1 = value.into(),
            None => self.pairs.push((key.into(), value.into())),
        }
    }
}
