//! Two fabric links in one process over the loopback interface: packets,
//! order, credits and back-pressure, direct transfers and RMA reads, with
//! and without forced memory registration, without a second host.

use super::*;

/// Set at build time to build without the system libraries on purpose.
fn without_libfabric() -> bool {
    option_env!("OXMPI_NO_SYSTEM_LIBS").is_some()
}

/// Both registration policies: what the provider needs (none on tcp), and
/// every buffer registered, as `FI_MR_LOCAL` providers need.
const POLICIES: [MrPolicy; 2] = [MrPolicy::Auto, MrPolicy::Register];

fn pair_with(
    credits: usize,
    packet: usize,
    mr: MrPolicy,
    rndv: RndvPolicy,
) -> (FabricLink, FabricLink) {
    pair_on("tcp", credits, packet, mr, rndv)
}

/// Providers the stress tests run on: tcp (through ofi_rxm) and net,
/// libfabric 1.17's RDM provider of its own (the default where offered).
const PROVIDERS: [&str; 2] = ["tcp", "net"];

fn pair_on(
    provider: &str,
    credits: usize,
    packet: usize,
    mr: MrPolicy,
    rndv: RndvPolicy,
) -> (FabricLink, FabricLink) {
    let cfg = FabricConfig {
        provider: Some(provider.into()),
        iface: Some("lo".into()),
        addr: None,
        packet,
        credits,
        mr,
        rndv,
        debug: false,
    };
    let a = FabricLink::open(&cfg, 0, 2, &[1]).expect("open rank 0's endpoint on lo");
    let b = FabricLink::open(&cfg, 1, 2, &[0]).expect("open rank 1's endpoint on lo");
    a.add_peer(1, &b.address().unwrap()).unwrap();
    b.add_peer(0, &a.address().unwrap()).unwrap();
    (a, b)
}

/// Polls `link` until `want` packets arrived (or 10 s pass).
fn collect(link: &FabricLink, others: &[&FabricLink], want: usize) -> Vec<(usize, Vec<u8>)> {
    let mut got = Vec::new();
    let start = std::time::Instant::now();
    while got.len() < want {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "only {} of {want} arrived",
            got.len()
        );
        // SAFETY: one thread uses these links.
        unsafe { link.poll(&mut |from, bytes| got.push((from, bytes.to_vec()))) };
        for o in others {
            // SAFETY: as above.
            unsafe { o.poll(&mut |_, _| panic!("nothing is sent this way")) };
        }
    }
    got
}

#[test]
fn packets_arrive_whole_and_in_order_with_the_sender_rank() {
    if without_libfabric() {
        return;
    }
    for mr in POLICIES {
        let (a, b) = pair_with(16, 4096, mr, RndvPolicy::Tagged);
        assert!(a.reaches(1) && !a.reaches(0) && b.reaches(0));
        // Sizes around the inject limit and up to a whole packet.
        let sizes = [0usize, 1, 7, 64, 255, 256, 257, 1000, 4095, 4096];
        // A first packet makes the connection (both sides' progress needed).
        let mut hello = send_until_taken(&a, 1, &[b"hello"], &[&b]);
        if hello.is_empty() {
            hello = collect(&b, &[&a], 1);
        }
        assert_eq!(hello, vec![(0, b"hello".to_vec())]);
        let mut sent = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            let body: Vec<u8> = (0..n).map(|k| (k * 7 + i) as u8).collect();
            let header = [i as u8; 1];
            let parts: [&[u8]; 2] = if n == 0 {
                [&[], &[]]
            } else {
                [&header, &body[1..]]
            };
            let mut whole = parts[0].to_vec();
            whole.extend_from_slice(parts[1]);
            assert!(send_until_taken(&a, 1, &parts, &[]).is_empty());
            sent.push(whole);
        }
        let got = collect(&b, &[&a], sizes.len());
        for (k, (from, bytes)) in got.iter().enumerate() {
            assert_eq!(*from, 0);
            assert_eq!(bytes, &sent[k], "packet {k}");
        }
        // Larger than a packet: refused, not truncated.
        let big = vec![0u8; 4097];
        // SAFETY: as above.
        assert!(!unsafe { a.try_send(1, &[&big]) });
    }
}

#[test]
fn a_sender_stops_at_its_credits_until_the_receiver_consumes() {
    if without_libfabric() {
        return;
    }
    let credits = 4;
    for mr in POLICIES {
        let (a, b) = pair_with(credits, 2048, mr, RndvPolicy::Tagged);
        let payload = vec![5u8; 1500];
        // The first packet also makes the connection (the provider's progress
        // needs both sides polled); b consumes it and owes one credit.
        let mut first = send_until_taken(&a, 1, &[&payload], &[&b]);
        if first.is_empty() {
            first = collect(&b, &[&a], 1);
        }
        assert_eq!(first.len(), 1);
        let mut accepted = 0;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(500) {
            // SAFETY: one thread uses these links.
            if unsafe { a.try_send(1, &[&payload]) } {
                accepted += 1;
            }
            // SAFETY: as above.
            unsafe { a.poll(&mut |_, _| {}) };
        }
        assert_eq!(accepted, credits - 1, "the window is the credit count");
        // The receiver consumes: credits come back and sending resumes.
        let got = collect(&b, &[&a], credits - 1);
        assert!(got
            .iter()
            .all(|(from, bytes)| *from == 0 && bytes == &payload));
        assert!(send_until_taken(&a, 1, &[&payload], &[]).is_empty());
    }
}

/// Sends one packet, polling `link` and `others` while the provider or the
/// credits refuse it; returns what `others` received meanwhile. Fails
/// after 10 s.
fn send_until_taken(
    link: &FabricLink,
    peer: usize,
    parts: &[&[u8]],
    others: &[&FabricLink],
) -> Vec<(usize, Vec<u8>)> {
    let mut got = Vec::new();
    let start = std::time::Instant::now();
    // SAFETY: one thread uses these links.
    while !unsafe { link.try_send(peer, parts) } {
        assert!(start.elapsed() < Duration::from_secs(10), "never taken");
        unsafe { link.poll(&mut |_, _| {}) };
        for o in others {
            unsafe { o.poll(&mut |from, bytes| got.push((from, bytes.to_vec()))) };
        }
    }
    got
}

#[test]
fn many_packets_both_ways_with_sends_from_inside_poll() {
    if without_libfabric() {
        return;
    }
    for (provider, mr) in PROVIDERS.iter().flat_map(|p| POLICIES.map(|m| (*p, m))) {
        let (a, b) = pair_on(provider, 4, 1024, mr, RndvPolicy::Tagged);
        let total = 2000u32;
        let (mut next, mut echoed, mut expect) = (0u32, 0u32, 0u32);
        let start = std::time::Instant::now();
        while expect < total {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{provider}: stalled at {expect}"
            );
            // SAFETY: one thread uses these links.
            unsafe {
                if next < total && a.try_send(1, &[&next.to_le_bytes()]) {
                    next += 1;
                }
                // b echoes each packet from inside its poll (re-entrant send).
                b.poll(&mut |from, bytes| {
                    assert_eq!(from, 0);
                    let v = u32::from_le_bytes(bytes.try_into().unwrap());
                    assert_eq!(v, echoed, "a's packets arrive in order");
                    while !b.try_send(0, &[bytes]) {}
                    echoed += 1;
                });
                a.poll(&mut |from, bytes| {
                    assert_eq!(from, 1);
                    assert_eq!(u32::from_le_bytes(bytes.try_into().unwrap()), expect);
                    expect += 1;
                });
            }
        }
    }
}

/// Sends one packet from `a` to `b`: the provider connects the two (its
/// progress needs both sides polled).
fn connect(a: &FabricLink, b: &FabricLink) {
    let mut hello = send_until_taken(a, 1, &[b"hi"], &[b]);
    if hello.is_empty() {
        hello = collect(b, &[a], 1);
    }
    assert_eq!(hello.len(), 1);
}

/// Polls both links until `a` reported `on_a` and `b` reported `on_b`
/// direct completions (or 20 s pass); returns them.
#[allow(clippy::type_complexity)] // two lists of (token, outcome)
fn finish(
    a: &FabricLink,
    b: &FabricLink,
    on_a: usize,
    on_b: usize,
) -> (
    Vec<(u64, Result<usize, Error>)>,
    Vec<(u64, Result<usize, Error>)>,
) {
    let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
    let start = std::time::Instant::now();
    while got_a.len() < on_a || got_b.len() < on_b {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "direct operations stalled"
        );
        // SAFETY: one thread uses the links.
        unsafe {
            a.poll(&mut |_, _| {});
            b.poll(&mut |_, _| {});
            a.take_direct_done(&mut |t, r| got_a.push((t, r)));
            b.take_direct_done(&mut |t, r| got_b.push((t, r)));
        }
    }
    (got_a, got_b)
}

/// Registrations a link keeps for its packet buffers: none on tcp unless
/// forced, then the receive and the send buffers.
fn packet_registrations(mr: MrPolicy) -> usize {
    match mr {
        MrPolicy::Auto => 0,
        MrPolicy::Register => 2,
    }
}

#[test]
fn direct_transfers_land_in_the_posted_buffer() {
    if without_libfabric() {
        return;
    }
    for mr in POLICIES {
        let (a, b) = pair_with(4, 1024, mr, RndvPolicy::Tagged);
        let base = packet_registrations(mr);
        assert_eq!(
            (a.registrations(), b.registrations()),
            ((base, base), (base, base))
        );
        connect(&a, &b);
        let len = 3 << 20;
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; len];
        // SAFETY: both buffers outlive the transfer (waited for below); one
        // thread uses the links.
        let key = unsafe { b.post_direct_recv(0, dst.as_mut_ptr(), len, 77) }.unwrap();
        unsafe { a.post_direct_send(1, key, data.as_ptr(), len, 88) }.unwrap();
        let (sent, received) = finish(&a, &b, 1, 1);
        assert!(matches!(sent[..], [(88, Ok(_))]), "{sent:?}");
        assert!(
            matches!(received[..], [(77, Ok(n))] if n == len),
            "{received:?}"
        );
        assert!(dst == data, "the bytes differ");
        // Forced: each user buffer was registered for its transfer, and
        // the registration is closed again.
        let per_transfer = base / 2;
        assert_eq!(a.registrations(), (base, base + per_transfer));
        assert_eq!(b.registrations(), (base, base + per_transfer));
    }
}

#[test]
fn a_receiver_reads_the_exposed_buffer_whole_or_in_part() {
    if without_libfabric() {
        return;
    }
    for mr in POLICIES {
        let (a, b) = pair_with(4, 1024, mr, RndvPolicy::Read);
        assert!(
            a.offers_read(1) && b.offers_read(0),
            "tcp reads remote memory"
        );
        assert!(!a.offers_read(0) && !a.offers_read(7), "only fabric peers");
        connect(&a, &b);
        let base = packet_registrations(mr);
        let len = (3 << 20) + 5;
        let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
        // SAFETY: `data` outlives the exposure (concealed below); one
        // thread uses the links.
        let remote = unsafe { a.expose(1, data.as_ptr(), len, 88) }.unwrap();
        assert_eq!(a.registrations(), (base + 1, base + 1), "always registered");
        // The whole buffer, then its first part only (a receive that
        // truncates), both from the one exposure.
        for (i, n) in [len, 1000].into_iter().enumerate() {
            let mut dst = vec![0u8; n];
            // SAFETY: `dst` outlives the read (waited for below).
            unsafe { b.post_read(0, dst.as_mut_ptr(), n, remote, 77 + i as u64) }.unwrap();
            let (_, read) = finish(&a, &b, 0, 1);
            assert!(
                matches!(read[..], [(t, Ok(_))] if t == 77 + i as u64),
                "{read:?}"
            );
            assert!(dst[..] == data[..n], "the bytes of a {n}-byte read differ");
        }
        // Forced, the reader registered each destination for its read.
        assert_eq!(b.registrations(), (base, base + 2 * (base / 2)));
        // SAFETY: nothing reads it any more.
        unsafe { a.conceal(1, 88) };
        assert_eq!(a.registrations(), (base, base + 1));
        // Concealing twice, or what was never exposed, does nothing.
        unsafe { a.conceal(1, 88) };
        unsafe { a.conceal(1, 12345) };
        assert_eq!(a.registrations(), (base, base + 1));
    }
}

#[test]
fn reads_are_offered_only_when_chosen() {
    if without_libfabric() {
        return;
    }
    let (a, _b) = pair_with(4, 1024, MrPolicy::Auto, RndvPolicy::Tagged);
    assert!(!a.offers_read(1));
    assert!(
        a.description().contains("tagged send"),
        "{}",
        a.description()
    );
    let (a, _b) = pair_with(4, 1024, MrPolicy::Register, RndvPolicy::Read);
    assert!(a.offers_read(1));
    let text = a.description();
    assert!(
        text.contains("RMA read") && text.contains("forced"),
        "{text}"
    );
    let (a, _b) = pair_with(4, 1024, MrPolicy::Auto, RndvPolicy::Auto);
    assert_eq!(a.offers_read(1), READS_BY_DEFAULT);
}

#[test]
fn a_hello_introduces_a_sender_the_receiver_did_not_know() {
    if without_libfabric() {
        return;
    }
    for provider in PROVIDERS {
        hello_on(provider);
    }
}

fn hello_on(provider: &str) {
    let cfg = FabricConfig {
        provider: Some(provider.into()),
        iface: Some("lo".into()),
        addr: None,
        packet: 1024,
        credits: 4,
        mr: MrPolicy::Auto,
        rndv: RndvPolicy::Tagged,
        debug: false,
    };
    // Position 0 knows nobody; position 2 knows 0 (as a spawned child
    // knows its parents), and says hello before its packets.
    let a = FabricLink::open(&cfg, 0, 3, &[2]).expect("open position 0 on lo");
    let c = FabricLink::open(&cfg, 2, 3, &[0]).expect("open position 2 on lo");
    c.add_peer(0, &a.address().unwrap()).unwrap();
    let start = std::time::Instant::now();
    // net refuses the inject until the sender's own progress (its poll)
    // has made the connection: both sides poll between tries, as the
    // spawned root does.
    while !c.send_hello(0).unwrap() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{provider}: hello never taken"
        );
        // SAFETY: one thread uses these links.
        unsafe { a.poll(&mut |_, _| panic!("a hello is not a packet")) };
        // SAFETY: as above.
        unsafe { c.poll(&mut |_, _| panic!("nothing was sent to c")) };
    }
    for i in 0..12u8 {
        let mut got = send_until_taken(&c, 0, &[&[i; 100]], &[&a]);
        if got.is_empty() {
            got = collect(&a, &[], 1);
        }
        assert_eq!(got, vec![(2, vec![i; 100])], "{provider}");
        // The answer goes back on the address the hello brought (and
        // returns credits: twelve packets exceed the window of four).
        let mut back = send_until_taken(&a, 2, &[&[i]], &[&c]);
        if back.is_empty() {
            back = collect(&c, &[], 1);
        }
        assert_eq!(back, vec![(0, vec![i])], "{provider}");
    }
    assert!(a.add_peer_if_absent(2, &c.address().unwrap()).is_ok());
}
