//! The safe layer over `endpoint.c`: one RDM endpoint with tagged messages
//! (and RMA reads when asked for), its address vector, completion queue and
//! memory registrations. Posting operations stays `unsafe` where the
//! provider keeps a pointer (buffers, descriptors and contexts must outlive
//! the operation); everything else returns `Result`s that name the
//! libfabric call and carry its error text.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::ptr::NonNull;

use super::result::{loaded, strerror, Loaded};
use super::sys::{self, Completion, RawEndpoint};
use crate::Error;

/// Bytes a provider may keep in each operation's context (`FI_CONTEXT2`).
pub(crate) const CONTEXT_BYTES: usize = 64;

/// An open endpoint. Closed (with everything posted on it) on drop; its
/// registrations must be closed before ([`Endpoint::deregister`]).
pub(crate) struct Endpoint {
    raw: NonNull<RawEndpoint>,
    lib: &'static Loaded,
    /// What was opened: provider, interface, fabric, limits.
    pub(crate) description: String,
    inject: usize,
    /// The registration modes the provider requires (`FI_MR_*`).
    pub(crate) mr_mode: u64,
    /// Whether RMA reads work both ways.
    pub(crate) can_read: bool,
}

/// A memory registration. Not closed on drop: its owner hands it back to
/// [`Endpoint::deregister`] (before the endpoint's domain closes).
#[derive(Debug)]
pub(crate) struct Mr {
    raw: NonNull<c_void>,
    /// The descriptor data calls pass for buffers inside it.
    pub(crate) desc: *mut c_void,
    /// The key peers read it by.
    pub(crate) key: u64,
}

// SAFETY: the endpoint is opened with FI_THREAD_SAFE, so libfabric
// serialises calls on it from several threads itself; the buffers and
// contexts it keeps are covered by the `unsafe` posting methods.
unsafe impl Send for Endpoint {}
// SAFETY: as above.
unsafe impl Sync for Endpoint {}

/// A failed operation reported by the completion queue.
#[derive(Debug)]
pub(crate) struct Failed {
    /// The context the operation was posted with.
    pub(crate) context: *mut c_void,
    /// libfabric's and the provider's description.
    pub(crate) text: String,
}

/// What posting an operation did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Posted {
    /// Accepted.
    Yes,
    /// The provider's queue is full: try again after polling.
    Busy,
}

/// The provider tried first when none is named: libfabric's own RDM
/// provider over sockets (1.17's `net`), which needs no utility layer and
/// measured as fast as MPICH between hosts here (`tcp;ofi_rxm`, the
/// fallback, 1.65x slower at 8 bytes; docs/ARCHITECTURE.md, "Jobs across
/// hosts"). `FI_PROVIDER` still narrows what libfabric offers.
pub(crate) const PREFERRED_PROVIDER: &str = "net";

/// The providers to try, in order: the one named, else
/// [`PREFERRED_PROVIDER`] and then libfabric's first.
pub(crate) fn provider_candidates(named: Option<&str>) -> Vec<Option<&str>> {
    match named {
        Some(p) => vec![Some(p)],
        None => vec![Some(PREFERRED_PROVIDER), None],
    }
}

impl Endpoint {
    /// [`Endpoint::open`] on the first of [`provider_candidates`] that
    /// opens; with `reads`, asking for RMA reads first and then without (a
    /// provider without them still carries everything tagged). The last
    /// error when none opens.
    pub(crate) fn open_preferred(
        provider: Option<&str>,
        iface: Option<&str>,
        addr: Option<&str>,
        reads: bool,
        cq_size: usize,
    ) -> Result<Endpoint, Error> {
        let mut last = None;
        for prov in provider_candidates(provider) {
            let opened = match reads {
                true => Endpoint::open(prov, iface, addr, true, cq_size)
                    .or_else(|_| Endpoint::open(prov, iface, addr, false, cq_size)),
                false => Endpoint::open(prov, iface, addr, false, cq_size),
            };
            match opened {
                Ok(ep) => return Ok(ep),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one candidate"))
    }

    /// Opens an endpoint on `provider` (None: libfabric's choice, which
    /// `FI_PROVIDER` narrows) and interface `iface` (None: the one holding
    /// IP address `addr` if one does, else the first address other hosts
    /// can reach), whose completion queue holds `cq_size` entries; with
    /// `rma`, only a provider that also does RMA reads both ways qualifies.
    pub(crate) fn open(
        provider: Option<&str>,
        iface: Option<&str>,
        addr: Option<&str>,
        rma: bool,
        cq_size: usize,
    ) -> Result<Endpoint, Error> {
        let lib = loaded()?;
        let prov = provider.map(cstring).transpose()?;
        let ifc = iface.map(cstring).transpose()?;
        let ip = addr.map(cstring).transpose()?;
        let mut raw: *mut RawEndpoint = std::ptr::null_mut();
        let mut desc = [0 as c_char; 512];
        // SAFETY: `entry` holds libfabric's entry points (kept valid by the
        // static library); the strings are NUL-terminated or null; `raw`
        // and `desc` are valid for writes, `desc` for its whole length.
        let code = unsafe {
            sys::oxmpi_ofi_open(
                &lib.entry,
                prov.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                ifc.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                ip.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                c_int::from(rma),
                cq_size,
                &mut raw,
                desc.as_mut_ptr(),
                desc.len(),
            )
        };
        // SAFETY: the shim always writes a NUL-terminated string into `desc`.
        let text = unsafe { CStr::from_ptr(desc.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let Some(raw) = NonNull::new(raw).filter(|_| code == 0) else {
            let wanted = match (provider, iface) {
                (Some(p), Some(i)) => format!(" (provider {p:?}, interface {i:?})"),
                (Some(p), None) => format!(" (provider {p:?})"),
                (None, Some(i)) => format!(" (interface {i:?})"),
                (None, None) => String::new(),
            };
            // No entry matched: say what there is to choose from.
            let hint = if code == -(sys::FI_ENODATA as c_int) {
                let found = super::providers().map(|p| p.join(", ")).unwrap_or_default();
                format!("; no tagged RDM endpoint there (providers here: {found})")
            } else {
                String::new()
            };
            return Err(Error::Fabric {
                what: "opening a libfabric endpoint",
                reason: format!("{text}{wanted}: {} ({code}){hint}", strerror(lib, code)),
            });
        };
        // SAFETY: `raw` is an open endpoint (three plain queries).
        let (inject, mr_mode, can_read) = unsafe {
            (
                sys::oxmpi_ofi_inject_size(raw.as_ptr()),
                sys::oxmpi_ofi_mr_mode(raw.as_ptr()),
                sys::oxmpi_ofi_can_read(raw.as_ptr()) != 0,
            )
        };
        Ok(Endpoint {
            raw,
            lib,
            description: text,
            inject,
            mr_mode,
            can_read,
        })
    }

    fn fail(&self, what: &'static str, code: isize) -> Error {
        let code = c_int::try_from(code).unwrap_or(c_int::MIN);
        Error::Fabric {
            what,
            reason: format!("{} ({code})", strerror(self.lib, code)),
        }
    }

    /// The largest message sent without a completion (`inject_size`).
    pub(crate) fn inject_size(&self) -> usize {
        self.inject
    }

    /// The completion queue's file descriptor to sleep on, if it has one.
    pub(crate) fn wait_fd(&self) -> Option<RawFd> {
        // SAFETY: `raw` is open.
        let fd = unsafe { sys::oxmpi_ofi_wait_fd(self.raw.as_ptr()) };
        (fd >= 0).then_some(fd)
    }

    /// This endpoint's address, to publish for peers.
    pub(crate) fn address(&self) -> Result<Vec<u8>, Error> {
        let mut buf = vec![0u8; 256];
        loop {
            let mut len = buf.len();
            // SAFETY: `buf` is valid for `len` bytes of writes.
            let code = unsafe {
                sys::oxmpi_ofi_getname(self.raw.as_ptr(), buf.as_mut_ptr().cast(), &mut len)
            };
            if code == -(sys::FI_ETOOSMALL as c_int) && len > buf.len() {
                buf.resize(len, 0);
                continue;
            }
            if code != 0 {
                return Err(self.fail("fi_getname", code as isize));
            }
            buf.truncate(len);
            return Ok(buf);
        }
    }

    /// Adds a peer's address; returns the handle sends name it by.
    pub(crate) fn insert(&self, address: &[u8]) -> Result<u64, Error> {
        let mut handle = 0u64;
        // SAFETY: `address` is a whole address as `address()` produced it
        // on the peer (the provider reads its own format's length).
        let code = unsafe {
            sys::oxmpi_ofi_insert(self.raw.as_ptr(), address.as_ptr().cast(), &mut handle)
        };
        if code != 0 {
            return Err(self.fail("fi_av_insert", code as isize));
        }
        Ok(handle)
    }

    fn posted(&self, what: &'static str, code: isize) -> Result<Posted, Error> {
        match code {
            0 => Ok(Posted::Yes),
            c if c == -sys::FI_EAGAIN => Ok(Posted::Busy),
            c => Err(self.fail(what, c)),
        }
    }

    /// Registers `len` bytes at `buf` for `access` (`sys::FI_SEND`, ...),
    /// asking for `key` where the provider does not choose keys itself.
    ///
    /// # Safety
    /// `buf..buf+len` stays allocated until the registration is closed.
    pub(crate) unsafe fn register(
        &self,
        buf: *const u8,
        len: usize,
        access: u64,
        key: u64,
    ) -> Result<Mr, Error> {
        let (mut raw, mut desc, mut got) = (std::ptr::null_mut(), std::ptr::null_mut(), 0u64);
        // SAFETY: the caller's contract; the out-pointers are valid.
        let code = unsafe {
            sys::oxmpi_ofi_mr_reg(
                self.raw.as_ptr(),
                buf.cast(),
                len.max(1),
                access,
                key,
                &mut raw,
                &mut desc,
                &mut got,
            )
        };
        match NonNull::new(raw).filter(|_| code == 0) {
            Some(raw) => Ok(Mr {
                raw,
                desc,
                key: got,
            }),
            None => Err(self.fail("fi_mr_reg", code as isize)),
        }
    }

    /// Closes a registration.
    ///
    /// # Safety
    /// No operation posted with its descriptor or key is still running.
    pub(crate) unsafe fn deregister(&self, mr: Mr) {
        // SAFETY: the caller's contract; `mr` was registered here and is
        // closed once (it is consumed).
        unsafe { sys::oxmpi_ofi_mr_close(mr.raw.as_ptr()) };
    }

    /// Closes the endpoint itself, ending every operation posted on it,
    /// so that registrations can be closed before the rest (on drop).
    pub(crate) fn close_endpoint(&self) {
        // SAFETY: `raw` is open; the callers (drop) post nothing after this.
        unsafe { sys::oxmpi_ofi_close_ep(self.raw.as_ptr()) };
    }

    /// Sends `len` bytes at `buf` (inside the registration whose
    /// descriptor is `desc`, or null) to `dest` with `tag`; the completion
    /// comes back with `context`.
    ///
    /// # Safety
    /// `buf..buf+len` stays readable, and `context` (at least
    /// [`CONTEXT_BYTES`] writable bytes) and `desc` stay valid, until the
    /// completion is polled or the endpoint is closed.
    pub(crate) unsafe fn send(
        &self,
        buf: *const u8,
        len: usize,
        desc: *mut c_void,
        dest: u64,
        tag: u64,
        context: *mut c_void,
    ) -> Result<Posted, Error> {
        // SAFETY: the caller's contract.
        let code = unsafe {
            sys::oxmpi_ofi_tsend(self.raw.as_ptr(), buf.cast(), len, desc, dest, tag, context)
        };
        self.posted("fi_tsend", code)
    }

    /// Reads `len` bytes at `addr` of peer `src`'s registration `key` into
    /// `buf` (inside the registration `desc`, or null).
    ///
    /// # Safety
    /// As [`recv`](Endpoint::recv) for `buf`, `desc` and `context`.
    #[allow(clippy::too_many_arguments)] // fi_read's own arguments
    pub(crate) unsafe fn read(
        &self,
        buf: *mut u8,
        len: usize,
        desc: *mut c_void,
        src: u64,
        addr: u64,
        key: u64,
        context: *mut c_void,
    ) -> Result<Posted, Error> {
        // SAFETY: the caller's contract.
        let code = unsafe {
            sys::oxmpi_ofi_read(
                self.raw.as_ptr(),
                buf.cast(),
                len,
                desc,
                src,
                addr,
                key,
                context,
            )
        };
        self.posted("fi_read", code)
    }

    /// Sends `bytes` (at most [`inject_size`](Endpoint::inject_size)) with
    /// no completion: the provider copies them before returning.
    pub(crate) fn inject(&self, bytes: &[u8], dest: u64, tag: u64) -> Result<Posted, Error> {
        // SAFETY: `bytes` is only read during the call.
        let code = unsafe {
            sys::oxmpi_ofi_tinject(
                self.raw.as_ptr(),
                bytes.as_ptr().cast(),
                bytes.len(),
                dest,
                tag,
            )
        };
        self.posted("fi_tinject", code)
    }

    /// Posts a receive of up to `len` bytes into `buf` (inside the
    /// registration `desc`, or null) for messages whose tag equals `tag` in
    /// the bits `ignore` leaves out.
    ///
    /// # Safety
    /// `buf..buf+len` stays writable and unaliased, and `context` and
    /// `desc` as for [`send`](Endpoint::send), until the completion is
    /// polled or the endpoint is closed.
    pub(crate) unsafe fn recv(
        &self,
        buf: *mut u8,
        len: usize,
        desc: *mut c_void,
        tag: u64,
        ignore: u64,
        context: *mut c_void,
    ) -> Result<Posted, Error> {
        // SAFETY: the caller's contract.
        let code = unsafe {
            sys::oxmpi_ofi_trecv(
                self.raw.as_ptr(),
                buf.cast(),
                len,
                desc,
                tag,
                ignore,
                context,
            )
        };
        self.posted("fi_trecv", code)
    }

    /// Reads completions into `out`; returns how many. A failed operation
    /// is returned as `Err` (one per call).
    pub(crate) fn poll(
        &self,
        out: &mut [MaybeUninit<Completion>; sys::POLL_MAX],
    ) -> Result<usize, Failed> {
        let mut context: *mut c_void = std::ptr::null_mut();
        let mut err: c_int = 0;
        // Written (NUL-terminated) only with a failure: not cleared per poll.
        let mut text = [MaybeUninit::<c_char>::uninit(); 256];
        // SAFETY: every pointer is valid for writes of its length.
        let n = unsafe {
            sys::oxmpi_ofi_poll(
                self.raw.as_ptr(),
                out.as_mut_ptr().cast(),
                out.len(),
                &mut context,
                &mut err,
                text.as_mut_ptr().cast(),
                text.len(),
            )
        };
        if n == -sys::FI_EAVAIL {
            // SAFETY: the shim wrote a NUL-terminated string.
            let provider = unsafe { CStr::from_ptr(text.as_ptr().cast()) }.to_string_lossy();
            return Err(Failed {
                context,
                text: format!("{} ({err}): {provider}", strerror(self.lib, err)),
            });
        }
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Whether the caller may now sleep on [`wait_fd`](Endpoint::wait_fd)
    /// without missing a completion (`fi_trywait`).
    pub(crate) fn may_sleep(&self) -> bool {
        // SAFETY: `raw` is open.
        unsafe { sys::oxmpi_ofi_trywait(self.raw.as_ptr()) == 0 }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // SAFETY: `raw` is open and closed only here.
        unsafe { sys::oxmpi_ofi_close(self.raw.as_ptr()) };
    }
}

fn cstring(s: &str) -> Result<CString, Error> {
    CString::new(s).map_err(|_| Error::Fabric {
        what: "opening a libfabric endpoint",
        reason: format!("the name {s:?} contains a NUL byte"),
    })
}
