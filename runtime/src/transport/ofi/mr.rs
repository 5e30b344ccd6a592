//! Memory registration for the fabric link: what must be registered,
//! decided once from the provider's `mr_mode` and `OXMPI_OFI_MR`, and the
//! registrations themselves.
//!
//! Two kinds:
//! - local: the buffers of data calls (packet buffers, registered once;
//!   the user buffers of direct transfers and the destination of RMA
//!   reads, registered per transfer), only where the provider requires it
//!   (`FI_MR_LOCAL`) or registration is forced;
//! - remote: a rendezvous sender's buffer that its receiver reads (RMA),
//!   always, per transfer.
//!
//! Per transfer, not cached: a cache keyed by address range serves a later
//! buffer at the same addresses after the first was freed and its pages
//! replaced, unless every free and unmap is intercepted, which a library
//! that does not own the allocator cannot do safely. libfabric's own
//! registration cache (verbs, efa, ... with its memory monitors) does
//! that interception where registering is costly, so a registration here
//! is a cache hit there; on tcp, which pins nothing, it is a table insert.

use std::ffi::c_void;

use super::endpoint::{Endpoint, Mr};
use super::sys;
use crate::error::Error;

/// Which buffers get registered (`OXMPI_OFI_MR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MrPolicy {
    /// What the provider requires (local buffers under `FI_MR_LOCAL`).
    Auto,
    /// Every buffer a data call names, whatever the provider requires:
    /// the path of `FI_MR_LOCAL` providers, on any provider.
    Register,
}

/// How large contiguous messages cross (`OXMPI_OFI_RNDV`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RndvPolicy {
    /// The faster of the two on this provider (see `link::reads_by_default`).
    Auto,
    /// The receiver reads the sender's registered buffer (RMA), where the
    /// provider offers RMA reads; tagged otherwise.
    Read,
    /// The receiver posts a tagged receive into its buffer and answers
    /// Cts; the sender sends into it.
    Tagged,
}

/// The endpoint's registration rules and its open registrations' count.
#[derive(Debug)]
pub(crate) struct Registrar {
    /// Local buffers are registered and their descriptors passed.
    local: bool,
    /// Why (for logs).
    forced: bool,
    /// Peers address a registration by virtual address (else by offset).
    virt_addr: bool,
    /// The provider picks keys; else the next key asked for is this.
    prov_key: bool,
    next_key: u64,
    /// Registrations open now.
    pub(crate) live: usize,
    /// Registrations made so far.
    pub(crate) made: usize,
}

impl Registrar {
    /// The rules for a provider whose required modes are `mr_mode`.
    pub(crate) fn new(mr_mode: u64, policy: MrPolicy) -> Registrar {
        let required = mr_mode & sys::FI_MR_LOCAL != 0;
        Registrar {
            local: required || policy == MrPolicy::Register,
            forced: !required && policy == MrPolicy::Register,
            virt_addr: mr_mode & sys::FI_MR_VIRT_ADDR != 0,
            prov_key: mr_mode & sys::FI_MR_PROV_KEY != 0,
            next_key: 1,
            live: 0,
            made: 0,
        }
    }

    /// Whether local buffers are registered.
    pub(crate) fn local(&self) -> bool {
        self.local
    }

    /// What registration does here, for logs.
    pub(crate) fn describe(&self) -> &'static str {
        match (self.local, self.forced) {
            (true, true) => "every buffer registered (forced)",
            (true, false) => "every buffer registered (the provider requires it)",
            (false, _) => "buffers registered for RMA only",
        }
    }

    /// Registers `len` bytes at `buf` for `access`.
    ///
    /// # Safety
    /// `buf..buf+len` stays allocated until the registration is closed.
    unsafe fn register(
        &mut self,
        ep: &Endpoint,
        buf: *const u8,
        len: usize,
        access: u64,
    ) -> Result<Mr, Error> {
        let key = if self.prov_key { 0 } else { self.next_key };
        // SAFETY: the caller's contract.
        let mr = unsafe { ep.register(buf, len, access, key) }?;
        if !self.prov_key {
            self.next_key += 1;
        }
        self.live += 1;
        self.made += 1;
        Ok(mr)
    }

    /// Registers a local buffer for `access` where local buffers are
    /// registered (else `None`: the data call passes no descriptor).
    ///
    /// # Safety
    /// As for [`register`](Self::register).
    pub(crate) unsafe fn local_mr(
        &mut self,
        ep: &Endpoint,
        buf: *const u8,
        len: usize,
        access: u64,
    ) -> Result<Option<Mr>, Error> {
        if !self.local {
            return Ok(None);
        }
        // SAFETY: the caller's contract.
        unsafe { self.register(ep, buf, len, access) }.map(Some)
    }

    /// Registers `len` bytes at `buf` for peers to read; returns it with
    /// the address a peer names `buf` by.
    ///
    /// # Safety
    /// As for [`register`](Self::register).
    pub(crate) unsafe fn remote_mr(
        &mut self,
        ep: &Endpoint,
        buf: *const u8,
        len: usize,
    ) -> Result<(Mr, u64), Error> {
        // SAFETY: the caller's contract.
        let mr = unsafe { self.register(ep, buf, len, sys::FI_REMOTE_READ) }?;
        let addr = if self.virt_addr { buf as u64 } else { 0 };
        Ok((mr, addr))
    }

    /// Closes a registration.
    ///
    /// # Safety
    /// No operation that uses it is still running.
    pub(crate) unsafe fn close(&mut self, ep: &Endpoint, mr: Mr) {
        // SAFETY: the caller's contract.
        unsafe { ep.deregister(mr) };
        self.live -= 1;
    }
}

/// The descriptor of an optional registration (null: none).
pub(crate) fn desc(mr: Option<&Mr>) -> *mut c_void {
    mr.map_or(std::ptr::null_mut(), |m| m.desc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_follow_the_provider_and_the_policy() {
        let none = Registrar::new(0, MrPolicy::Auto);
        assert!(!none.local() && !none.virt_addr && !none.prov_key);
        let forced = Registrar::new(0, MrPolicy::Register);
        assert!(forced.local && forced.describe().contains("forced"));
        let verbs_like = Registrar::new(
            sys::FI_MR_LOCAL | sys::FI_MR_VIRT_ADDR | sys::FI_MR_PROV_KEY,
            MrPolicy::Auto,
        );
        assert!(verbs_like.local && verbs_like.virt_addr && verbs_like.prov_key);
        assert!(verbs_like.describe().contains("requires"));
    }
}
