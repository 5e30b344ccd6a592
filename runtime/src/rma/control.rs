//! A window's control block: the words in shared memory through which
//! the ranks of a window synchronize without the target taking part
//! (a target busy computing, never calling MPI, still lets others lock,
//! accumulate and complete). One block per window, in the window's
//! segment, mapped by every rank:
//!
//! - per rank, a passive-target lock word (`EXCLUSIVE` bit, or the number
//!   of shared holders) and an accumulate lock (held around every
//!   accumulate-family operation on that rank's memory: per-element
//!   atomicity for every op and type, and between ops);
//! - per (target, origin) pair, a post counter (the target's `Win_post`
//!   to that origin) and a completion counter (the origin's
//!   `Win_complete` to that target): each side counts what it has
//!   consumed, so epochs never need resetting;
//! - per rank, the regions a dynamic window has attached (a sequence
//!   lock around a small table that only its owner writes).

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use super::memory::SharedRegion;

/// The exclusive holder's bit of a lock word (the rest counts shared holders).
pub const EXCLUSIVE: u64 = 1 << 63;
/// Regions a dynamic window can have attached at once, per rank.
pub const MAX_ATTACHED: usize = 64;

const RANK_BLOCK: usize = 64;
const LOCK_AT: usize = 0;
const ACC_AT: usize = 8;
/// Per rank: sequence word, count, then `MAX_ATTACHED` (base, len) pairs.
const DYNAMIC_BLOCK: usize = 16 + MAX_ATTACHED * 16;
/// u64 words describing a device region besides its base and length (its
/// CUDA IPC description).
pub const DEVICE_WORDS: usize = 10;
/// Per rank: sequence word, count, then `MAX_ATTACHED` device regions
/// (base, len, description).
const DEVICE_BLOCK: usize = 16 + MAX_ATTACHED * (16 + DEVICE_WORDS * 8);

/// A device region attached to a dynamic window: base and length in its
/// owner, and how peers open it.
pub type DeviceRegion = (usize, usize, [u64; DEVICE_WORDS]);

/// Where things are in a control block for `n` ranks.
#[derive(Debug, Clone, Copy)]
pub struct ControlLayout {
    n: usize,
    posts: usize,
    dones: usize,
    dynamic: usize,
    device: usize,
    len: usize,
}

impl ControlLayout {
    /// The layout for a window of `n` ranks.
    pub fn new(n: usize) -> ControlLayout {
        let posts = n * RANK_BLOCK;
        let dones = posts + n * n * 4;
        let dynamic = (dones + n * n * 4).next_multiple_of(8);
        let device = dynamic + n * DYNAMIC_BLOCK;
        let len = device + n * DEVICE_BLOCK;
        ControlLayout {
            n,
            posts,
            dones,
            dynamic,
            device,
            len,
        }
    }

    /// Bytes of the block.
    pub fn bytes(&self) -> usize {
        self.len
    }
}

/// A window's control block as one rank sees it (a view into a mapped segment).
pub struct Control {
    base: *mut u8,
    layout: ControlLayout,
}

// SAFETY: every access goes through atomics in shared memory.
unsafe impl Send for Control {}
// SAFETY: as above.
unsafe impl Sync for Control {}

impl Control {
    /// The block at the start of `region` (which the window keeps mapped
    /// while the `Control` lives).
    pub fn at(region: &SharedRegion, layout: ControlLayout) -> Control {
        assert!(
            region.len() >= layout.len,
            "control block outside its segment"
        );
        Control {
            base: region.base(),
            layout,
        }
    }

    fn u64_at(&self, offset: usize) -> &AtomicU64 {
        debug_assert!(offset & 7 == 0 && offset + 8 <= self.layout.len);
        // SAFETY: inside the mapped block (checked when made), 8-aligned
        // (the mapping is page-aligned), and only ever used atomically.
        unsafe { &*(self.base.add(offset) as *const AtomicU64) }
    }

    fn u32_at(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset & 3 == 0 && offset + 4 <= self.layout.len);
        // SAFETY: as in `u64_at`, 4-aligned.
        unsafe { &*(self.base.add(offset) as *const AtomicU32) }
    }

    /// The passive-target lock word of `rank`.
    pub fn lock_word(&self, rank: usize) -> &AtomicU64 {
        self.u64_at(rank * RANK_BLOCK + LOCK_AT)
    }

    /// The accumulate lock of `rank`.
    pub fn acc_lock(&self, rank: usize) -> &AtomicU32 {
        self.u32_at(rank * RANK_BLOCK + ACC_AT)
    }

    /// How many times `target` has posted an exposure epoch to `origin`.
    pub fn posts(&self, target: usize, origin: usize) -> &AtomicU32 {
        self.u32_at(self.layout.posts + (target * self.layout.n + origin) * 4)
    }

    /// How many times `origin` has completed an access epoch to `target`.
    pub fn dones(&self, target: usize, origin: usize) -> &AtomicU32 {
        self.u32_at(self.layout.dones + (target * self.layout.n + origin) * 4)
    }

    fn dynamic_at(&self, rank: usize) -> usize {
        self.layout.dynamic + rank * DYNAMIC_BLOCK
    }

    /// Replaces `rank`'s attached regions (only `rank` itself calls this).
    pub fn publish_regions(&self, rank: usize, regions: &[(usize, usize)]) {
        assert!(regions.len() <= MAX_ATTACHED);
        let at = self.dynamic_at(rank);
        let seq = self.u64_at(at);
        let s = seq.load(Ordering::Relaxed);
        seq.store(s + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.u64_at(at + 8)
            .store(regions.len() as u64, Ordering::Relaxed);
        for (i, &(b, l)) in regions.iter().enumerate() {
            self.u64_at(at + 16 + i * 16)
                .store(b as u64, Ordering::Relaxed);
            self.u64_at(at + 24 + i * 16)
                .store(l as u64, Ordering::Relaxed);
        }
        seq.store(s + 2, Ordering::Release);
    }

    /// `rank`'s attached regions as (base, len), a consistent snapshot.
    pub fn regions(&self, rank: usize) -> Vec<(usize, usize)> {
        let at = self.dynamic_at(rank);
        let seq = self.u64_at(at);
        loop {
            let s = seq.load(Ordering::Acquire);
            if s % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let n = (self.u64_at(at + 8).load(Ordering::Relaxed) as usize).min(MAX_ATTACHED);
            let v: Vec<(usize, usize)> = (0..n)
                .map(|i| {
                    (
                        self.u64_at(at + 16 + i * 16).load(Ordering::Relaxed) as usize,
                        self.u64_at(at + 24 + i * 16).load(Ordering::Relaxed) as usize,
                    )
                })
                .collect();
            fence(Ordering::Acquire);
            if seq.load(Ordering::Relaxed) == s {
                return v;
            }
        }
    }
}

impl Control {
    fn device_at(&self, rank: usize) -> usize {
        self.layout.device + rank * DEVICE_BLOCK
    }

    /// Replaces `rank`'s attached device regions (only `rank` calls this,
    /// before publishing a new region and after withdrawing one).
    pub fn publish_device_regions(&self, rank: usize, regions: &[DeviceRegion]) {
        assert!(regions.len() <= MAX_ATTACHED);
        let at = self.device_at(rank);
        let seq = self.u64_at(at);
        let s = seq.load(Ordering::Relaxed);
        seq.store(s + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.u64_at(at + 8)
            .store(regions.len() as u64, Ordering::Relaxed);
        let entry = 16 + DEVICE_WORDS * 8;
        for (i, (b, l, words)) in regions.iter().enumerate() {
            let e = at + 16 + i * entry;
            self.u64_at(e).store(*b as u64, Ordering::Relaxed);
            self.u64_at(e + 8).store(*l as u64, Ordering::Relaxed);
            for (k, w) in words.iter().enumerate() {
                self.u64_at(e + 16 + k * 8).store(*w, Ordering::Relaxed);
            }
        }
        seq.store(s + 2, Ordering::Release);
    }

    /// `rank`'s attached device regions, a consistent snapshot (one
    /// relaxed load when it has none).
    pub fn device_regions(&self, rank: usize) -> Vec<DeviceRegion> {
        let at = self.device_at(rank);
        let seq = self.u64_at(at);
        if seq.load(Ordering::Acquire) == 0 {
            return Vec::new();
        }
        let entry = 16 + DEVICE_WORDS * 8;
        loop {
            let s = seq.load(Ordering::Acquire);
            if s % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let n = (self.u64_at(at + 8).load(Ordering::Relaxed) as usize).min(MAX_ATTACHED);
            let v: Vec<DeviceRegion> = (0..n)
                .map(|i| {
                    let e = at + 16 + i * entry;
                    let word = |k: usize| self.u64_at(e + k).load(Ordering::Relaxed);
                    let mut words = [0u64; DEVICE_WORDS];
                    for (k, w) in words.iter_mut().enumerate() {
                        *w = word(16 + k * 8);
                    }
                    (word(0) as usize, word(8) as usize, words)
                })
                .collect();
            fence(Ordering::Acquire);
            if seq.load(Ordering::Relaxed) == s {
                return v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_regions_do_not_overlap() {
        let n = 3;
        let layout = ControlLayout::new(n);
        let region = SharedRegion::create(layout.bytes(), "a test").unwrap();
        let c = Control::at(&region, layout);
        for r in 0..n {
            c.lock_word(r).store(100 + r as u64, Ordering::Relaxed);
            c.acc_lock(r).store(200 + r as u32, Ordering::Relaxed);
        }
        for t in 0..n {
            for o in 0..n {
                c.posts(t, o).store((t * n + o) as u32, Ordering::Relaxed);
                c.dones(t, o)
                    .store(1000 + (t * n + o) as u32, Ordering::Relaxed);
            }
        }
        c.publish_regions(1, &[(0x1000, 16), (0x2000, 32)]);
        c.publish_regions(2, &[(0x3000, 8); MAX_ATTACHED]);
        for r in 0..n {
            assert_eq!(c.lock_word(r).load(Ordering::Relaxed), 100 + r as u64);
            assert_eq!(c.acc_lock(r).load(Ordering::Relaxed), 200 + r as u32);
        }
        for t in 0..n {
            for o in 0..n {
                assert_eq!(c.posts(t, o).load(Ordering::Relaxed), (t * n + o) as u32);
                assert_eq!(
                    c.dones(t, o).load(Ordering::Relaxed),
                    1000 + (t * n + o) as u32
                );
            }
        }
        assert_eq!(c.regions(0), []);
        assert_eq!(c.regions(1), [(0x1000, 16), (0x2000, 32)]);
        assert_eq!(c.regions(2).len(), MAX_ATTACHED);
        c.publish_regions(1, &[(0x2000, 32)]);
        assert_eq!(c.regions(1), [(0x2000, 32)]);
        assert_eq!(c.device_regions(2), []);
        let d = (0x5000, 64, [7u64; DEVICE_WORDS]);
        c.publish_device_regions(2, &[d; MAX_ATTACHED]);
        assert_eq!(c.device_regions(2), [d; MAX_ATTACHED]);
        assert_eq!(c.device_regions(1), []);
        assert_eq!(c.regions(2).len(), MAX_ATTACHED);
        c.publish_device_regions(2, &[]);
        assert_eq!(c.device_regions(2), []);
    }

    #[test]
    fn a_peer_mapping_sees_the_same_memory() {
        let a = SharedRegion::create(4096, "a test").unwrap();
        let b = SharedRegion::open(std::process::id(), a.fd(), 4096).unwrap();
        assert_ne!(a.base(), b.base());
        // SAFETY: both map the same 4096 bytes.
        unsafe {
            a.base().add(100).write(42);
            assert_eq!(b.base().add(100).read(), 42);
        }
    }
}
