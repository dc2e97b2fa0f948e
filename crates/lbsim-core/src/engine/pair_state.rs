//! Connection state carried from one flow of a host pair to the next
//! (`transport.resume_pair_state`), as the REPS artifact's `-connections_mapping`
//! does (htsim uec.cpp: a finishing `UecSrc` stores its REPS buffer, window,
//! PLB and flowlet entropies, BitMap skip bitmap and ECMP/subflow path under
//! "src_dst"; `startFlow` of the pair's next flow takes them back).
//!
//! lbsim keeps the finished flow's whole balancer (REPS: cached EVs, freezing
//! and exploration state; ECMP: its path; ...) and its window. A flow that
//! starts while the pair's previous flow is still running finds only what
//! the pair's last *finished* flow left, as in the artifact; the artifact
//! then shares one REPS buffer between the two live flows, lbsim gives each
//! its own copy.

use crate::cc::CongestionControl;
use crate::lb::Lb;
use crate::transport::Flow;
use std::collections::HashMap;

/// What each host pair's last finished flow left behind.
#[derive(Default)]
pub struct PairMemory {
    pairs: HashMap<(u32, u32), (Lb, Option<u64>)>,
}

impl PairMemory {
    /// `flow` finished sending: keep its balancer and window for its pair.
    pub fn save(&mut self, flow: &Flow) {
        let pair = (flow.spec.src, flow.spec.dst);
        self.pairs.insert(pair, (flow.lb.clone(), flow.cc.window()));
    }

    /// `flow` starts: take up what its pair's last finished flow left, if any.
    pub fn resume(&self, flow: &mut Flow) {
        if let Some((lb, window)) = self.pairs.get(&(flow.spec.src, flow.spec.dst)) {
            flow.lb = lb.clone();
            if let Some(w) = *window {
                flow.cc.set_window(w);
            }
        }
    }
}
