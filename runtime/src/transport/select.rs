//! Choosing the transport for this rank's peers, once, at start.

use std::sync::Arc;

use super::self_::NoPeers;
use super::shm::{ShmConfig, ShmNode};
use super::shm_link::ShmTransport;
use super::Transport;
use crate::bootstrap::Bootstrap;
use crate::config::Config;
use crate::error::Error;

/// Builds the transport that reaches every other rank of the world.
/// Ranks on other hosts need an inter-host transport, which does not exist
/// yet: that is reported as an error naming the rank and host.
pub fn connect(boot: &mut dyn Bootstrap, config: &Config) -> Result<Arc<dyn Transport>, Error> {
    if boot.size() == 1 {
        return Ok(Arc::new(NoPeers));
    }
    let my_node = boot.node_of_rank()[boot.rank()];
    if let Some(far) = boot.node_of_rank().iter().position(|&n| n != my_node) {
        return Err(Error::Unsupported(format!(
            "rank {far} runs on another host (node {}); OxMPI has no inter-host transport yet (libfabric is planned)",
            boot.node_of_rank()[far]
        )));
    }
    let node = ShmNode::establish(boot, &ShmConfig::from_config(config))?;
    Ok(Arc::new(ShmTransport::new(node, boot.size())))
}
