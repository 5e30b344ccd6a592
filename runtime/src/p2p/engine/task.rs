//! Work a higher layer hands the engine to advance on every poll (the
//! collective layer's non-blocking schedules): the engine runs it without
//! knowing what it is.

use super::Engine;

/// A piece of work the engine advances whenever it makes progress.
pub trait Task: Send {
    /// Moves what can move; returns whether anything did.
    fn advance(&mut self, engine: &mut Engine) -> bool;
    /// Whether the work is done (then the engine calls [`Task::finish`]).
    fn finished(&self) -> bool;
    /// Completes the work (its request), once [`Task::finished`].
    fn finish(self: Box<Self>, engine: &mut Engine);
}

impl Engine {
    /// Keeps `task` to be advanced by [`Engine::progress`] until it has finished.
    pub fn add_task(&mut self, task: Box<dyn Task>) {
        self.tasks.push(task);
    }

    /// Advances every task; returns whether any moved.
    pub(super) fn advance_tasks(&mut self) -> bool {
        // Work on the list outside `self` so each task is advanced in place
        // (a task may add tasks meanwhile).
        let mut list = std::mem::take(&mut self.tasks);
        let mut moved = false;
        for task in list.iter_mut() {
            moved |= task.advance(self);
        }
        list.append(&mut self.tasks);
        let mut i = 0;
        while i < list.len() {
            if list[i].finished() {
                let task = list.swap_remove(i);
                task.finish(self);
            } else {
                i += 1;
            }
        }
        self.tasks = list;
        moved
    }
}
