//! The slot table behind direct handles.

/// A table of live objects addressed by index; freed slots are reused.
pub struct Table<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Table<T> {
    /// An empty table.
    pub const fn new() -> Table<T> {
        Table {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Stores `value` and returns its index.
    pub fn insert(&mut self, value: T) -> usize {
        match self.free.pop() {
            Some(i) => {
                // A free slot is empty: nothing to drop (no drop call, so
                // the value is not spilled around one).
                std::mem::forget(self.slots[i].replace(value));
                i
            }
            None => {
                self.slots.push(Some(value));
                self.slots.len() - 1
            }
        }
    }

    /// Keeps the slots below `n` for [`Table::put`]: [`Table::insert`]
    /// does not hand them out (they stay empty until put).
    pub fn reserve_below(&mut self, n: usize) {
        while self.slots.len() < n {
            self.slots.push(None);
        }
    }

    /// Stores `value` at `index` (used for the predefined slots).
    pub fn put(&mut self, index: usize, value: T) {
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, || None);
        }
        self.free.retain(|&i| i != index);
        self.slots[index] = Some(value);
    }

    /// The live object at `index`.
    pub fn get(&self, index: usize) -> Option<&T> {
        self.slots.get(index).and_then(Option::as_ref)
    }

    /// The live object at `index`, mutably.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.slots.get_mut(index).and_then(Option::as_mut)
    }

    /// Removes and returns the object at `index`.
    pub fn remove(&mut self, index: usize) -> Option<T> {
        let v = self.slots.get_mut(index).and_then(Option::take);
        if v.is_some() {
            self.free.push(index);
        }
        v
    }

    /// Drops the object at `index` where it lies (no move out).
    #[inline]
    pub fn discard(&mut self, index: usize) {
        if let Some(v) = self.slots.get_mut(index) {
            if v.is_some() {
                *v = None;
                self.free.push(index);
            }
        }
    }

    /// Frees `index` without running its object's drop glue: for an
    /// object whose drop would do nothing (it owns nothing), so that the
    /// hot path makes no out-of-line drop calls.
    #[inline]
    pub fn vacate(&mut self, index: usize) {
        if let Some(v) = self.slots.get_mut(index) {
            if let Some(value) = v.take() {
                std::mem::forget(value);
                self.free.push(index);
            }
        }
    }

    /// The live objects with their indices.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i, v)))
    }

    /// Removes everything.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
    }
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table::new()
    }
}
