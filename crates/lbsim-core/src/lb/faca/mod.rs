//! FaCa (FaCa §5): host-side flow placement. Hosts probe the paths to their
//! destinations with INT probes on many entropy values, learn which value
//! maps to which path and how loaded each path is, and pin each new flow to
//! one value chosen by Flowing & Jumping. See docs/faca.md.

pub mod estimate;
pub mod flowing;
pub mod table;
