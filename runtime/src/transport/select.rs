//! Choosing each peer's endpoint, once, at start: self for a world of one,
//! shared memory alone when every rank runs on this host, else the
//! [`Router`] over shared memory (this host's ranks) and the fabric (the
//! others). Locality is the launcher's placement (`PMI_process_mapping`),
//! never what happens to be reachable.

use std::sync::Arc;

use super::ofi::link::{FabricConfig, FabricLink};
use super::ofi::mr::{MrPolicy, RndvPolicy};
use super::router::Router;
use super::self_::NoPeers;
use super::shm::{ShmConfig, ShmNode, ShmTransport};
use super::Transport;
use crate::bootstrap::Bootstrap;
use crate::config::Config;
use crate::error::Error;

/// The PMI key under which rank `rank` publishes its fabric address.
fn address_key(rank: usize) -> String {
    format!("oxmpi-ofi-addr-{rank}")
}

/// Builds the transport that reaches every other rank of the world.
pub fn connect(boot: &mut dyn Bootstrap, config: &Config) -> Result<Arc<dyn Transport>, Error> {
    if boot.size() == 1 {
        return Ok(Arc::new(NoPeers));
    }
    let (me, size) = (boot.rank(), boot.size());
    let nodes = boot.node_of_rank().to_vec();
    let remote: Vec<usize> = (0..size).filter(|&r| nodes[r] != nodes[me]).collect();
    let debug = config.debug_enabled("transport");
    // The fabric endpoint is opened and published before shared memory's
    // fences, which then make every address visible.
    let fabric = if remote.is_empty() {
        None
    } else {
        let link = FabricLink::open(&fabric_config(config), me, size, &remote)?;
        boot.put(&address_key(me), &hex(&link.address()?))?;
        if debug {
            eprintln!(
                "oxmpi[transport]: rank {me}: fabric endpoint {}",
                link.description()
            );
        }
        Some(link)
    };
    let node = ShmNode::establish(boot, &ShmConfig::from_config(config))?;
    let shm = ShmTransport::new(node, size);
    let Some(fabric) = fabric else {
        if debug {
            eprintln!("oxmpi[transport]: rank {me}: every peer on this host: shm");
        }
        return Ok(Arc::new(shm));
    };
    for &peer in &remote {
        let text = boot
            .get(&address_key(peer))?
            .ok_or_else(|| Error::Bootstrap(format!("rank {peer} published no fabric address")))?;
        let address = unhex(&text).ok_or_else(|| {
            Error::Bootstrap(format!("rank {peer}'s fabric address {text:?} is not hex"))
        })?;
        fabric.add_peer(peer, &address)?;
    }
    let cold_polls = u32::try_from(config.ofi_cold_polls).unwrap_or(u32::MAX);
    let router = Router::new(me, &nodes, shm, fabric, cold_polls);
    if debug {
        for (peer, route) in router.routes().iter().enumerate() {
            eprintln!(
                "oxmpi[transport]: rank {me} -> rank {peer} (node {}): {}",
                nodes[peer],
                route.name()
            );
        }
    }
    Ok(Arc::new(router))
}

/// The fabric link's settings from the configuration.
pub(crate) fn fabric_config(config: &Config) -> FabricConfig {
    let named = |s: &str| (!s.is_empty()).then(|| s.to_string());
    FabricConfig {
        provider: named(&config.ofi_provider),
        iface: named(&config.ofi_iface),
        packet: config.ofi_packet,
        credits: config.ofi_credits,
        mr: match config.ofi_mr.as_str() {
            "register" => MrPolicy::Register,
            _ => MrPolicy::Auto,
        },
        rndv: match config.ofi_rndv.as_str() {
            "read" => RndvPolicy::Read,
            "tagged" => RndvPolicy::Tagged,
            _ => RndvPolicy::Auto,
        },
        debug: config.debug_enabled("transport"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_survive_the_key_value_space() {
        let addr = [0u8, 1, 0x7f, 0x80, 0xff, 10, 200];
        assert_eq!(hex(&addr), "00017f80ff0ac8");
        assert_eq!(unhex(&hex(&addr)).as_deref(), Some(&addr[..]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("").as_deref(), Some(&[][..]));
    }
}
