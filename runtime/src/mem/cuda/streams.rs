//! A communicator's CUDA streams, one per context, made at first use and
//! destroyed when the communicator and every collective that uses them
//! are gone: its device reductions run there.

use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys};

use super::ctx::{check, Entered};
use crate::error::Error;

/// Streams by context, shared with the collectives running on them.
#[derive(Debug, Default)]
pub struct DeviceStreams(Arc<Owned>);

/// The streams themselves: (context, stream).
#[derive(Debug, Default)]
struct Owned(Mutex<Vec<(usize, usize)>>);

/// One of a communicator's streams, kept alive while this lives.
#[derive(Debug, Clone)]
pub struct StreamRef {
    _owner: Arc<Owned>,
    /// The `CUstream`.
    pub stream: usize,
}

impl DeviceStreams {
    /// The stream for context `ctx` (made now if this is its first use).
    pub fn get(&self, ctx: usize) -> Result<StreamRef, Error> {
        let mut all = self.0 .0.lock().unwrap_or_else(|p| p.into_inner());
        let stream = match all.iter().find(|&&(c, _)| c == ctx) {
            Some(&(_, s)) => s,
            None => {
                let _in = Entered::enter(ctx as sys::CUcontext)?;
                let s = check(
                    "cuStreamCreate",
                    result::stream::create(result::stream::StreamKind::NonBlocking),
                )? as usize;
                all.push((ctx, s));
                s
            }
        };
        Ok(StreamRef {
            _owner: Arc::clone(&self.0),
            stream,
        })
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        for (ctx, s) in self
            .0
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            if let Ok(_in) = Entered::enter(ctx as sys::CUcontext) {
                // SAFETY: made by `get` in this context, destroyed once, after
                // the last collective using it (each waited for its kernels).
                let _ = unsafe { result::stream::destroy(s as sys::CUstream) };
            }
        }
    }
}
