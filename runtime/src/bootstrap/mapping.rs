//! `PMI_process_mapping`: encode and decode the (vector,(node,count,ranks)) blocks.
