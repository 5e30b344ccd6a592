//! Rank programs of the communicator suite: split, dup, create, free and
//! id recycling, split_type, attributes, groups. Each panics on any
//! deviation, which fails its rank and therefore the job.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use oxmpi::comm::context::MAX_COMMS;
use oxmpi::{
    AttrValue, Comm, Comparison, CopyPolicy, Error, ErrorClass, Group, Keyval, SplitType,
    ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB, UNDEFINED,
};

use crate::comm::{ring, sum};

const WORLD_MARK: i32 = 1000;
const SUB_MARK: i32 = 2000;

fn split(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    // Parity, in reverse order of world rank.
    let half = world.split(rank % 2, -rank)?.expect("a color was given");
    let mine: Vec<i32> = (0..size).filter(|r| r % 2 == rank % 2).rev().collect();
    assert_eq!(half.size(), mine.len() as i32);
    assert_eq!(
        half.rank(),
        mine.iter().position(|&r| r == rank).unwrap() as i32
    );
    let want: Vec<usize> = mine.iter().map(|&r| r as usize).collect();
    assert_eq!(half.world_ranks(), &want[..]);
    let expect = if size == 1 {
        Comparison::Congruent
    } else {
        Comparison::Unequal
    };
    assert_eq!(half.compare(world), expect);
    // Isolation: the same tag on parent and child at the same time. Post
    // the child's wildcard receive first; it must only ever see child traffic.
    let mut sub_got = [0i32; 2];
    let sub_recv = half.irecv(&mut sub_got, ANY_SOURCE, ANY_TAG)?;
    let world_got = ring(world, WORLD_MARK, 7)?;
    assert_eq!(world_got, [(rank + size - 1) % size, WORLD_MARK]);
    let hs = half.size();
    let next = (half.rank() + 1) % hs;
    half.send(&[half.rank(), SUB_MARK], next, 7)?;
    let st = sub_recv.wait()?;
    // Nobody sends on `half` again until every wildcard receive matched.
    half.barrier()?;
    let prev = (half.rank() + hs - 1) % hs;
    assert_eq!(sub_got, [prev, SUB_MARK], "child saw parent traffic");
    assert_eq!((st.source, st.tag), (prev, 7));
    assert_eq!(
        sum(&half, rank as i64, 7)?,
        mine.iter().map(|&r| r as i64).sum()
    );
    // Same color, reversed key: similar to world.
    let rev = world.split(0, size - rank)?.unwrap();
    assert_eq!(rev.rank(), size - 1 - rank);
    let expect = if size == 1 {
        Comparison::Congruent
    } else {
        Comparison::Similar
    };
    assert_eq!(rev.compare(world), expect);
    // Same color and key: congruent, ties broken by parent rank.
    let same = world.split(5, 0)?.unwrap();
    assert_eq!(same.compare(world), Comparison::Congruent);
    assert_eq!(same.rank(), rank);
    // UNDEFINED: multiples of 3 get nothing; the others split by rank / 3.
    let color = if rank % 3 == 0 { UNDEFINED } else { rank / 3 };
    let third = world.split(color, 0)?;
    assert_eq!(third.is_none(), rank % 3 == 0);
    if let Some(t) = &third {
        let members: Vec<usize> = (0..size)
            .filter(|r| r % 3 != 0 && r / 3 == color)
            .map(|r| r as usize)
            .collect();
        assert_eq!(t.world_ranks(), &members[..]);
        // Sub-split of a split.
        let solo = t.split(t.rank(), 0)?.unwrap();
        assert_eq!((solo.size(), solo.rank()), (1, 0));
        assert_eq!(ring(&solo, 3, 1)?, [0, 3]);
    }
    // Bad color.
    let e = world.split(-5, 0).expect_err("negative color");
    assert!(e.to_string().contains("color -5"), "{e}");
    Ok(())
}

fn dup(world: &Comm, universe: &oxmpi::Universe) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    assert_eq!(world.compare(&world.clone()), Comparison::Ident);
    let d = world.dup()?;
    assert_eq!(d.compare(world), Comparison::Congruent);
    assert_eq!((d.rank(), d.size()), (rank, size));
    let dd = d.dup()?;
    assert_eq!(dd.compare(world), Comparison::Congruent);
    assert_ne!(dd.id(), d.id());
    // Isolation between dup and world on one tag.
    let mut on_dup = [0i32; 2];
    let r = d.irecv(&mut on_dup, ANY_SOURCE, 3)?;
    assert_eq!(ring(world, WORLD_MARK, 3)?[1], WORLD_MARK);
    assert_eq!(ring(&dd, SUB_MARK + 1, 3)?[1], SUB_MARK + 1);
    d.send(&[rank, SUB_MARK], (rank + 1) % size, 3)?;
    r.wait()?;
    assert_eq!(on_dup, [(rank + size - 1) % size, SUB_MARK]);
    // Names.
    assert_eq!(world.name(), "MPI_COMM_WORLD");
    assert_eq!(universe.self_comm().name(), "MPI_COMM_SELF");
    assert_eq!(d.name(), "");
    d.set_name("solver");
    assert_eq!(d.name(), "solver");
    d.set_name(&"é".repeat(100));
    assert_eq!(d.name().len(), 126, "truncated at a character boundary");
    // Self.
    let me = universe.self_comm();
    assert_eq!((me.size(), me.rank()), (1, 0));
    let sd = me.dup()?;
    assert_eq!(sd.compare(&me), Comparison::Congruent);
    let expect = if size == 1 {
        Comparison::Congruent
    } else {
        Comparison::Unequal
    };
    assert_eq!(me.compare(world), expect);
    // Freeing: predefined ones cannot; twice cannot.
    let e = world.clone().free().unwrap_err();
    assert_eq!(e.class(), ErrorClass::Comm);
    assert!(e.to_string().contains("MPI_COMM_WORLD"), "{e}");
    let other = dd.clone();
    dd.free()?;
    assert!(other.is_freed());
    let e = other.free().unwrap_err();
    assert!(e.to_string().contains("already freed"), "{e}");
    // Intercommunicator queries refuse an intracommunicator.
    assert!(!d.is_inter());
    let e = d.remote_size().unwrap_err();
    assert_eq!(e.class(), ErrorClass::Comm);
    assert!(e.to_string().contains("intercommunicator"), "{e}");
    assert!(d.merge(false).is_err());
    Ok(())
}

fn cycles(world: &Comm) -> Result<(), Error> {
    let first = world.dup()?;
    let base = first.id();
    first.free()?;
    for i in 0..5000 {
        let d = world.dup()?;
        assert_eq!(d.id(), base, "cycle {i}: the freed id is reused");
        if i % 1000 == 0 {
            assert_eq!(ring(&d, i, 0)?[1], i);
        }
        d.free()?;
    }
    // Drop frees too; split + drop cycles.
    for i in 0..500 {
        let s = world.split(i % 2, 0)?.unwrap();
        assert_eq!(s.id(), base);
    }
    // Exhaustion: hold every free id, then one more is a clear error.
    let mut held = Vec::new();
    let err = loop {
        match world.dup() {
            Ok(c) => held.push(c),
            Err(e) => break e,
        }
        assert!(held.len() <= MAX_COMMS, "ids never ran out");
    };
    assert_eq!(
        held.len(),
        MAX_COMMS - 2,
        "world and self hold one pair each"
    );
    assert!(
        matches!(err, Error::ContextIdsExhausted { free_here: 0, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("too many communicators"), "{err}");
    // Release one on every rank but the last: still exhausted there.
    let last = world.size() - 1;
    let spare = held.pop().unwrap();
    if world.rank() != last {
        spare.free()?;
    }
    if world.size() > 1 {
        assert!(matches!(
            world.dup(),
            Err(Error::ContextIdsExhausted { .. })
        ));
    }
    drop(held);
    let again = world.dup()?;
    assert_eq!(ring(&again, 9, 0)?[1], 9);
    Ok(())
}

fn create(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let all = world.group();
    // Evens by incl, listed in reverse.
    let evens: Vec<i32> = (0..size).filter(|r| r % 2 == 0).rev().collect();
    let g = all.incl(&evens)?;
    let c = world.create(&g)?;
    assert_eq!(c.is_some(), rank % 2 == 0);
    if let Some(c) = &c {
        assert_eq!(
            c.rank(),
            evens.iter().position(|&r| r == rank).unwrap() as i32
        );
        assert_eq!(c.group().compare(&g), Comparison::Ident);
        let got = ring(c, SUB_MARK, 11)?;
        assert_eq!(got[0], (c.rank() + c.size() - 1) % c.size());
        assert_eq!(
            sum(c, rank as i64, 11)?,
            evens.iter().map(|&r| r as i64).sum()
        );
    }
    // Everyone but rank 0 by excl.
    let g = all.excl(&[0])?;
    let c = world.create(&g)?;
    assert_eq!(c.is_some(), rank != 0);
    if let Some(c) = &c {
        assert_eq!(c.rank(), rank - 1);
        assert_eq!(sum(c, 1, 4)?, size as i64 - 1);
    }
    // The whole group: congruent; the empty group: nobody.
    let c = world.create(&all)?.unwrap();
    assert_eq!(c.compare(world), Comparison::Congruent);
    assert!(world.create(&Group::empty())?.is_none());
    // Disjoint groups (MPI-2.2): halves by each rank's own group.
    let lo: Vec<i32> = (0..size / 2).collect();
    let mine = if rank < size / 2 {
        all.incl(&lo)?
    } else {
        all.excl(&lo)?
    };
    let c = world.create(&mine)?.unwrap();
    assert_eq!(c.size(), mine.size());
    assert_eq!(sum(&c, 1, 2)?, mine.size() as i64);
    // From a sub-communicator, with a group not inside it: error.
    if size > 1 {
        let half = world.split(rank % 2, 0)?.unwrap();
        let e = half.create(&all).unwrap_err();
        assert!(e.to_string().contains("`group`"), "{e}");
        assert_eq!(e.class(), ErrorClass::Group);
    }
    Ok(())
}

fn split_type(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    // oxrun on one host: every rank is on this node.
    let node = world.split_type(SplitType::Shared, 0)?.unwrap();
    assert_eq!(node.compare(world), Comparison::Congruent);
    let rev = world.split_type(SplitType::Shared, -rank)?.unwrap();
    assert_eq!(rev.rank(), size - 1 - rank);
    // Undefined on odd ranks.
    let kind = if rank % 2 == 1 {
        SplitType::Undefined
    } else {
        SplitType::Shared
    };
    let evens = world.split_type(kind, 0)?;
    assert_eq!(evens.is_some(), rank % 2 == 0);
    if let Some(e) = evens {
        assert_eq!(e.size(), (size + 1) / 2);
        assert_eq!(sum(&e, 1, 0)?, e.size() as i64);
    }
    // From a sub-communicator.
    let half = world.split(rank % 2, 0)?.unwrap();
    let hn = half.split_type(SplitType::Shared, 0)?.unwrap();
    assert_eq!(hn.compare(&half), Comparison::Congruent);
    Ok(())
}

static COPIES: AtomicUsize = AtomicUsize::new(0);
static DELETES: AtomicUsize = AtomicUsize::new(0);

fn counted(copy: CopyPolicy) -> Keyval {
    Keyval::create(
        copy,
        Some(Box::new(|_, _, _| {
            DELETES.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })),
    )
}

fn counts() -> (usize, usize) {
    (
        COPIES.load(Ordering::SeqCst),
        DELETES.load(Ordering::SeqCst),
    )
}

fn attrs(world: &Comm) -> Result<(), Error> {
    // MPI_TAG_UB.
    let ub = world.get_attr(Keyval::TAG_UB)?.and_then(|v| v.word());
    assert_eq!(ub, Some(TAG_UB as usize));
    assert!(world.set_attr(Keyval::TAG_UB, AttrValue::Word(1)).is_err());
    // A keyval whose copy callback increments the value.
    let inc = counted(CopyPolicy::Call(Box::new(|_, _, v| {
        COPIES.fetch_add(1, Ordering::SeqCst);
        let n = *v.downcast_ref::<u64>().expect("a u64");
        Ok(Some(AttrValue::new(n + 1)))
    })));
    let never = counted(CopyPolicy::Never);
    let shared = counted(CopyPolicy::Dup);
    let skip = counted(CopyPolicy::Call(Box::new(|_, _, _| {
        COPIES.fetch_add(1, Ordering::SeqCst);
        Ok(None)
    })));
    let a = world.dup()?;
    a.set_attr(inc, AttrValue::new(10u64))?;
    a.set_attr(never, AttrValue::Word(7))?;
    a.set_attr(skip, AttrValue::Word(8))?;
    let payload = Arc::new(String::from("shared"));
    a.set_attr(shared, AttrValue::Shared(payload.clone()))?;
    assert_eq!(counts(), (0, 0));
    let b = a.dup()?;
    assert_eq!(counts(), (2, 0), "inc and skip were asked");
    let val = |c: &Comm, k| {
        c.get_attr(k)
            .unwrap()
            .map(|v| *v.downcast_ref::<u64>().unwrap())
    };
    assert_eq!(val(&b, inc), Some(11));
    assert!(b.get_attr(never)?.is_none());
    assert!(b.get_attr(skip)?.is_none());
    let s = b.get_attr(shared)?.unwrap();
    assert_eq!(
        s.downcast_ref::<String>().map(String::as_str),
        Some("shared")
    );
    drop(s);
    assert_eq!(Arc::strong_count(&payload), 3, "Dup shares the value");
    let c = b.dup()?;
    assert_eq!(val(&c, inc), Some(12));
    assert_eq!(counts(), (3, 0));
    // Replacing calls delete on the old value; delete_attr too; unset is a no-op.
    c.set_attr(inc, AttrValue::new(100u64))?;
    assert_eq!(counts(), (3, 1));
    c.delete_attr(inc)?;
    assert_eq!(counts(), (3, 2));
    c.delete_attr(inc)?;
    assert_eq!(counts(), (3, 2));
    assert!(c.get_attr(inc)?.is_none());
    // Free runs delete for each value (c: shared; b: inc, shared).
    c.free()?;
    assert_eq!(counts(), (3, 3));
    b.free()?;
    assert_eq!(counts(), (3, 5));
    // Dropping the last clone deletes too (a: inc, never, skip, shared).
    let a2 = a.clone();
    drop(a);
    assert_eq!(counts(), (3, 5));
    drop(a2);
    assert_eq!(counts(), (3, 9));
    assert_eq!(Arc::strong_count(&payload), 1);
    // A failing copy callback fails the dup; a failing delete fails free.
    let bad = Keyval::create(
        CopyPolicy::Call(Box::new(|_, _, _| {
            Err(Error::InvalidArgument {
                arg: "attribute",
                reason: "refused".into(),
            })
        })),
        Some(Box::new(|_, _, _| {
            Err(Error::State("delete refused".into()))
        })),
    );
    let d = world.dup()?;
    d.set_attr(bad, AttrValue::Word(1))?;
    let e = d.dup().expect_err("copy callback failed");
    assert!(e.to_string().contains("refused"), "{e}");
    let e = d.free().unwrap_err();
    assert!(e.to_string().contains("delete refused"), "{e}");
    // Freed keyvals cannot be used.
    inc.free()?;
    let e = world.get_attr(inc).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Keyval);
    assert!(inc.free().is_err());
    assert!(Keyval::TAG_UB.free().is_err());
    // Attributes on world: deleted at finalize (counted by the caller).
    world.set_attr(shared, AttrValue::Word(3))?;
    Ok(())
}

/// A tiny deterministic generator for the group model test.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }

    fn subset(&mut self, n: usize) -> Vec<i32> {
        let mut v: Vec<i32> = (0..n as i32).collect();
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
        v.truncate(self.below(n + 1));
        v
    }
}

fn groups(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let all = world.group();
    assert_eq!((all.size(), all.rank()), (size, Some(rank)));
    let mut rng = Lcg(7 + size as u64);
    // Model: a group is the Vec of its world ranks.
    for round in 0..300 {
        let a_ranks = rng.subset(size as usize);
        let b_ranks = rng.subset(size as usize);
        let a = all.incl(&a_ranks)?;
        let b = all.incl(&b_ranks)?;
        let ma: Vec<usize> = a_ranks.iter().map(|&r| r as usize).collect();
        let mb: Vec<usize> = b_ranks.iter().map(|&r| r as usize).collect();
        assert_eq!(a.world_ranks(), &ma[..]);
        let rank_in = |m: &[usize]| m.iter().position(|&w| w == rank as usize).map(|p| p as i32);
        assert_eq!(a.rank(), rank_in(&ma));
        let mut union = ma.clone();
        union.extend(mb.iter().filter(|w| !ma.contains(w)));
        let inter: Vec<usize> = ma.iter().copied().filter(|w| mb.contains(w)).collect();
        let diff: Vec<usize> = ma.iter().copied().filter(|w| !mb.contains(w)).collect();
        assert_eq!(a.union(&b).world_ranks(), &union[..], "round {round}");
        assert_eq!(a.intersection(&b).world_ranks(), &inter[..]);
        assert_eq!(a.difference(&b).world_ranks(), &diff[..]);
        let excl: Vec<usize> = (0..size as usize).filter(|w| !ma.contains(w)).collect();
        assert_eq!(all.excl(&a_ranks)?.world_ranks(), &excl[..]);
        let probe: Vec<i32> = (0..a.size()).chain([PROC_NULL]).collect();
        let want: Vec<i32> = ma
            .iter()
            .map(|w| {
                mb.iter()
                    .position(|x| x == w)
                    .map_or(UNDEFINED, |p| p as i32)
            })
            .chain([PROC_NULL])
            .collect();
        assert_eq!(a.translate_ranks(&probe, &b)?, want);
        let (mut sa, mut sb) = (ma.clone(), mb.clone());
        sa.sort();
        sb.sort();
        let cmp = if ma == mb {
            Comparison::Ident
        } else if sa == sb {
            Comparison::Similar
        } else {
            Comparison::Unequal
        };
        assert_eq!(a.compare(&b), cmp);
        // Ranges: (first, last, stride) against a direct expansion.
        let n = size;
        let (f, l) = (rng.below(n as usize) as i32, rng.below(n as usize) as i32);
        let stride = (rng.below(3) as i32 + 1) * if f <= l { 1 } else { -1 };
        let expanded: Vec<usize> = (0..)
            .map(|k| f + k * stride)
            .take_while(|&r| if stride > 0 { r <= l } else { r >= l })
            .map(|r| r as usize)
            .collect();
        assert_eq!(
            all.range_incl(&[(f, l, stride)])?.world_ranks(),
            &expanded[..]
        );
        let rest: Vec<usize> = (0..n as usize).filter(|w| !expanded.contains(w)).collect();
        assert_eq!(all.range_excl(&[(f, l, stride)])?.world_ranks(), &rest[..]);
    }
    // Errors name the argument and value.
    let e = all.incl(&[0, size]).unwrap_err().to_string();
    assert!(
        e.contains("`ranks`") && e.contains(&format!("rank {size}")),
        "{e}"
    );
    let e = all.incl(&[0, 0]).unwrap_err().to_string();
    assert!(e.contains("appears more than once"), "{e}");
    let e = all.range_incl(&[(0, 0, 0)]).unwrap_err().to_string();
    assert!(
        e.contains("`ranges`") && e.contains("stride is zero"),
        "{e}"
    );
    let e = all.translate_ranks(&[-3], &all).unwrap_err().to_string();
    assert!(e.contains("rank -3"), "{e}");
    // The empty group.
    let empty = Group::empty();
    assert_eq!((empty.size(), empty.rank()), (0, None));
    assert_eq!(all.intersection(&empty).size(), 0);
    assert_eq!(all.union(&empty).compare(&all), Comparison::Ident);
    assert_eq!(all.difference(&all).compare(&empty), Comparison::Ident);
    Ok(())
}

/// Two threads build communicators from different parents at once: the
/// agreements share this process's id bitmap and must neither deadlock nor
/// hand out one id twice.
fn threads(world: &Comm) -> Result<(), Error> {
    let other = world.dup()?;
    let work = |parent: Comm, tag: i32| {
        move || -> Result<Vec<u32>, Error> {
            let mut ids = Vec::new();
            for i in 0..200 {
                let d = parent.dup()?;
                ids.push(d.id().0);
                if i % 50 == 0 {
                    assert_eq!(ring(&d, tag, tag)?[1], tag);
                }
                if i % 2 == 0 {
                    d.free()?;
                }
            }
            Ok(ids)
        }
    };
    let a = std::thread::spawn(work(world.clone(), 1));
    let b = std::thread::spawn(work(other.clone(), 2));
    let a = a.join().expect("thread a")?;
    let b = b.join().expect("thread b")?;
    // Every rank saw the same ids for each parent's sequence.
    let digest = |ids: &[u32]| {
        ids.iter()
            .fold(0i64, |h, &x| (h * 31 + x as i64) % 1_000_003)
    };
    let size = world.size() as i64;
    for ids in [&a, &b] {
        let d = digest(ids);
        assert_eq!(sum(world, d, 9)?, d * size, "ranks disagree on ids");
    }
    Ok(())
}

/// Runs the role `role` on this rank.
pub fn run(role: &str) {
    let (universe, _) = oxmpi::init_thread(oxmpi::Threading::Multiple).expect("init");
    let world = universe.world();
    let result = match role {
        "split" => split(&world),
        "dup" => dup(&world, &universe),
        "cycles" => cycles(&world),
        "create" => create(&world),
        "split_type" => split_type(&world),
        "attrs" => attrs(&world),
        "groups" => groups(&world),
        "threads" => threads(&world),
        "create_group" => crate::subgroups::create_group(&world),
        "idup" => crate::subgroups::idup(&world),
        "intercomm" => crate::intercomms::intercomm(&world),
        "ports" => crate::ports::ports(&world, &universe),
        "ports_server" => crate::ports_jobs::server(&world, &universe),
        "ports_client" => crate::ports_jobs::client(&world, &universe),
        "ports_late" => crate::ports_jobs::late(&world, &universe),
        "ports_silent" => crate::ports_jobs::silent(&world, &universe),
        "ports_failing_server" => crate::ports_jobs::failing_server(&world, &universe),
        "ports_no_fabric_client" => crate::ports_jobs::no_fabric_client(&world, &universe),
        other => panic!("unknown role {other}"),
    };
    if let Err(e) = result {
        panic!("rank {} role {role}: {e}", world.rank());
    }
    let before = counts().1;
    drop(world);
    universe.finalize().expect("finalize");
    if role == "attrs" {
        assert_eq!(
            counts().1,
            before + 1,
            "world's attribute deleted at finalize"
        );
    }
}
