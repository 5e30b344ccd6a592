//! Topology: cores, NUMA nodes, and binding sets (hwloc).
