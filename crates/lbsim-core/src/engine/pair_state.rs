//! Connection state carried from one flow of a host pair to the next
//! (`transport.resume_pair_state`), as the REPS artifact's `-connections_mapping`
//! does (htsim uec.cpp: a finishing `UecSrc` stores its REPS buffer, window,
//! PLB and flowlet entropies, BitMap skip bitmap and ECMP/subflow path under
//! "src_dst"; `startFlow` of the pair's next flow takes them back).
//!
//! lbsim keeps the finished flow's whole balancer (REPS: cached EVs, freezing
//! and exploration state; ECMP: its path; ...) and its window. A flow that
//! starts while the pair's previous flow is still running finds only what
//! the pair's last *finished* flow left, as in the artifact. The artifact
//! hands out its REPS buffer by pointer (`startFlow`: `circular_buffer_reps =
//! CONNECTION_INFO_MAP[_src_dst].buffer`), so every flow that resumes from
//! the same saved entry uses one buffer object, live: what one caches,
//! freezes or explores, the others see. lbsim does the same: the saved REPS
//! state becomes a shared one (`Lb::SharedReps`) when a flow first resumes
//! from it. Everything else (window, other balancers' state) is a copy, as in
//! the artifact. On the artifact's Fig. 7 trace this took lbsim's REPS mean
//! FCT with a dead cable from 180.0 to 169.4 µs (artifact 169.5) and its freeze
//! entries under the 1 % switch bit errors from 226 to 182 (artifact 173).
//! A flow's `frozen_us` then counts only the freezes it ended itself, or one
//! still on when the run ends (a freeze another sharer ended is theirs).

use crate::cc::CongestionControl;
use crate::lb::{Lb, LoadBalancer};
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
    /// A REPS state is shared with every other flow that resumes from the
    /// same entry (until the pair's next flow finishes and replaces it).
    pub fn resume(&mut self, flow: &mut Flow) {
        if let Some((lb, window)) = self.pairs.get_mut(&(flow.spec.src, flow.spec.dst)) {
            if let Lb::Reps(r) = lb {
                *lb = Lb::SharedReps(std::rc::Rc::new(std::cell::RefCell::new(r.clone())));
            }
            // Cloning a shared REPS state shares it; any other balancer is copied.
            flow.lb = lb.clone();
            flow.lb.resumed();
            if let Some(w) = *window {
                flow.cc.set_window(w);
            }
        }
    }
}
