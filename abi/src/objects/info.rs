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
}
