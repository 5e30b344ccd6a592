//! Schedules over device buffers. When a collective's buffers are CUDA
//! device memory, its schedule runs the same steps with the data kept on
//! the device: scratch buffers are device memory, copies are device copies,
//! reductions of built-in operations run the NVRTC-compiled kernels, and
//! sends and receives pass through host bounce buffers (the engine and
//! transports see host memory only), except large ones between ranks of a
//! host, which go device to device by CUDA IPC. Other operations (user functions,
//! MINLOC, logical and bit ops), and every operation when NVRTC is missing,
//! bring their operands to the host, apply the host function and copy the
//! result back.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::run::Running;
use super::sched::{Base, Buf, Reducer, Schedule, Step};
use crate::error::Error;
use crate::mem::cuda::{self, DevBuf, DeviceReduce};
use crate::p2p::engine::{DeviceAlias, Engine};
use crate::p2p::request::ReqId;

/// What a schedule needs to run on the device.
#[derive(Default)]
pub(crate) struct DeviceRun {
    /// The context owning the device buffers (of the first one seen).
    ctx: usize,
    /// The communicator's stream in that context, for reductions.
    stream: Option<cuda::StreamRef>,
    /// Device twins of the schedule's temporaries, by index.
    temps: Vec<DevBuf>,
    /// The caller's buffers that are device memory (by base address).
    users: HashSet<usize>,
    /// Host bounce buffers of sends and receives in flight, by step.
    bounces: Vec<Option<Vec<u8>>>,
    /// Receives a CUDA IPC message may fill directly, by step: set when it did.
    delivered: Vec<Option<Arc<AtomicBool>>>,
}

impl Schedule {
    /// Moves the schedule onto the device if any of the caller's buffers
    /// is device memory (nothing when no driver is active). A failure is
    /// kept as the schedule's error, and no step will run.
    pub(crate) fn place_on_device(&mut self, streams: &cuda::DeviceStreams) {
        if !cuda::active() {
            return;
        }
        if let Err(e) = self.try_place_on_device(streams) {
            self.error.get_or_insert(e);
            self.drop_waiting();
        }
    }

    fn try_place_on_device(&mut self, streams: &cuda::DeviceStreams) -> Result<(), Error> {
        let mut bases = HashSet::new();
        for step in &self.steps {
            let bufs: [Option<Buf>; 2] = match step {
                Step::Send { buf, .. } | Step::Recv { buf, .. } => [Some(*buf), None],
                Step::Reduce { input, inout, .. } => [Some(*input), Some(*inout)],
                Step::Copy { src, dst } => [Some(*src), Some(*dst)],
                // Only built for host memory (`coll/area`).
                Step::Poll(_) => [None, None],
            };
            for b in bufs.into_iter().flatten() {
                if let Base::User(p) = b.base {
                    bases.insert(p as usize);
                }
            }
        }
        let mut run = DeviceRun::default();
        for base in bases {
            let c = cuda::classify(base as *const u8)?;
            if c.kind.is_device() {
                if run.users.is_empty() {
                    run.ctx = c.ctx;
                }
                run.users.insert(base);
            }
        }
        if run.users.is_empty() {
            return Ok(());
        }
        run.stream = Some(streams.get(run.ctx)?);
        for t in &self.temps {
            run.temps.push(DevBuf::new(t.len(), run.ctx)?);
        }
        run.bounces.resize_with(self.steps.len(), || None);
        run.delivered.resize_with(self.steps.len(), || None);
        self.device = Some(Box::new(run));
        Ok(())
    }

    /// Whether `buf` is device memory (the schedule runs on the device).
    fn on_device(&self, buf: Buf) -> bool {
        match (&self.device, buf.base) {
            (None, _) => false,
            (Some(_), Base::Temp(_)) => true,
            (Some(d), Base::User(p)) => d.users.contains(&(p as usize)),
        }
    }

    /// The device address of a temporary's range.
    pub(super) fn device_temp(&self, i: usize, offset: usize) -> Option<*mut u8> {
        let d = self.device.as_ref()?;
        Some(d.temps[i].ptr().wrapping_add(offset))
    }

    /// Where step `s` sends `buf` from: a host bounce holding its bytes
    /// when it is device memory.
    pub(crate) fn send_from(&mut self, s: usize, buf: Buf) -> Result<*mut u8, Error> {
        let ptr = self.ptr(buf);
        if !self.on_device(buf) {
            return Ok(ptr);
        }
        let mut bounce = vec![0u8; buf.len];
        // SAFETY: `ptr` is `buf.len` bytes of a live device buffer.
        unsafe { cuda::copy_from_device(&mut bounce, ptr) }?;
        let at = bounce.as_mut_ptr();
        self.keep_bounce(s, bounce);
        Ok(at)
    }

    /// Where step `s` receives `buf` into: a host bounce when it is device
    /// memory ([`Schedule::received`] moves the bytes on), with the device
    /// range it stands for, which a message sent by CUDA IPC fills directly.
    pub(crate) fn recv_into(&mut self, s: usize, buf: Buf) -> (*mut u8, Option<DeviceAlias>) {
        if !self.on_device(buf) {
            return (self.ptr(buf), None);
        }
        let dst = self.ptr(buf) as usize;
        let mut bounce = vec![0u8; buf.len];
        let at = bounce.as_mut_ptr();
        self.keep_bounce(s, bounce);
        let delivered = Arc::new(AtomicBool::new(false));
        if let Some(d) = self.device.as_mut() {
            d.delivered[s] = Some(delivered.clone());
        }
        (
            at,
            Some(DeviceAlias {
                dst,
                delivered,
                copied: 0,
            }),
        )
    }

    fn keep_bounce(&mut self, s: usize, bounce: Vec<u8>) {
        if let Some(d) = self.device.as_mut() {
            d.bounces[s] = Some(bounce);
        }
    }

    /// Step `s` finished having moved `count` bytes: a receive into device
    /// memory copies them from its bounce to the device.
    pub(crate) fn received(&mut self, s: usize, count: usize) -> Result<(), Error> {
        let Some(d) = self.device.as_mut() else {
            return Ok(());
        };
        let Some(bounce) = d.bounces[s].take() else {
            return Ok(());
        };
        if d.delivered[s]
            .take()
            .is_some_and(|f| f.load(Ordering::Acquire))
        {
            // Came by CUDA IPC, straight into the device buffer.
            return Ok(());
        }
        let Step::Recv { buf, .. } = self.steps[s] else {
            return Ok(());
        };
        let dst = self.ptr(buf);
        let n = count.min(bounce.len());
        // SAFETY: `dst` is `buf.len` bytes of a live device buffer.
        unsafe { cuda::copy_to_device(dst, &bounce[..n]) }
    }

    /// Runs a copy or reduction step of a schedule on the device.
    pub(super) fn run_local_on_device(
        &mut self,
        src: Buf,
        dst: Buf,
        op: Option<Reducer>,
    ) -> Result<(), Error> {
        let len = src.len.min(dst.len);
        let (s, d) = (self.ptr(src), self.ptr(dst));
        let (ctx, stream) = self.device.as_ref().map_or((0, 0), |r| {
            (r.ctx, r.stream.as_ref().map_or(0, |s| s.stream))
        });
        let Some(op) = op else {
            // SAFETY: both ranges are `len` bytes of live buffers.
            return unsafe { cuda::copy(d, s, len) };
        };
        let kernel = match op {
            Reducer::Builtin(_, o, ty) => DeviceReduce::new(o, ty),
            Reducer::Shared(_) => None,
        };
        match kernel {
            Some(k) if self.on_device(src) && self.on_device(dst) && cuda::kernels_available() => {
                // SAFETY: both are `len` bytes of device memory in `ctx`.
                unsafe { cuda::reduce_on_device(k, d, s, len, ctx, stream) }
            }
            _ => {
                // Through the host: read both operands, apply, write back.
                let mut input = vec![0u8; len];
                let mut inout = vec![0u8; len];
                // SAFETY: both ranges are `len` bytes of live buffers.
                unsafe {
                    cuda::copy(input.as_mut_ptr(), s, len)?;
                    cuda::copy(inout.as_mut_ptr(), d, len)?;
                }
                op(&input, &mut inout)?;
                // SAFETY: as above.
                unsafe { cuda::copy(d, inout.as_ptr(), len) }
            }
        }
    }
}

impl Engine {
    /// Starts a send step of device memory without a host bounce when the
    /// engine sends such a message to `to` so: by CUDA IPC (another rank
    /// of this host, large enough) or through the pinned-memory pipeline
    /// (large); `None` otherwise.
    pub(super) fn send_step_on_device(
        &mut self,
        run: &mut Running,
        to: usize,
        tag: i32,
        buf: Buf,
    ) -> Option<ReqId> {
        if run.sched.device.is_none() || !run.sched.on_device(buf) {
            return None;
        }
        let ptr = run.sched.ptr(buf);
        // SAFETY: the schedule's device buffers outlive the step and are
        // not written while it runs. A pipeline that cannot start leaves
        // the step to the host bounce.
        unsafe { self.start_send_device(to, run.context, run.rank, tag, ptr, buf.len) }
            .ok()
            .flatten()
    }
}
