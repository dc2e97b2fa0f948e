//! The recycled process itself ([`Recycled`]): bins of balls, what each
//! colour remembers, and one step at a time (removals, feedback, throws), as
//! the module documentation describes.

use super::{RecycledParams, Schedule};
use crate::rng::Rng;
use crate::theory::{stream, TheoryError};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Ball {
    seq: u64,
    colour: u32,
}

#[derive(Clone, Copy, Debug)]
struct Removal {
    seq: u64,
    bin: u32,
    colour: u32,
    /// Load of the bin before the removal.
    load: u32,
}

/// The state of the recycled process, one [`step`](Recycled::step) at a time.
pub struct Recycled {
    n: usize,
    tau: u32,
    ack_every: u64,
    schedule: Schedule,
    colours: u32,
    bins: Vec<VecDeque<Ball>>,
    /// The bin each colour remembers (NONE: none).
    memory: Vec<u32>,
    /// Balls of each colour in the bins (plus, mid-step, recycled ones about to be rethrown).
    in_flight: Vec<u32>,
    /// Colours with two or more balls in flight.
    shared: u32,
    /// Immediate schedule: colours without a ball, in round-robin order.
    free: VecDeque<u32>,
    /// Next colour in ring order (round-robin batches; immediate: collisions).
    cursor: u32,
    seq: u64,
    removed: u64,
    step: u64,
    collisions: u64,
    rng: Rng,
    removals: Vec<Removal>,
    recycle: Vec<u32>,
}

impl Recycled {
    /// A validated process in its initial state (empty bins, or `initial_loads`).
    pub fn new(p: &RecycledParams, seed: u64) -> Result<Self, TheoryError> {
        p.validate()?;
        let colours = p.b * p.n as u32;
        let mut s = Recycled {
            n: p.n,
            tau: p.tau,
            ack_every: p.ack_every as u64,
            schedule: p.schedule,
            colours,
            bins: vec![VecDeque::new(); p.n],
            memory: vec![NONE; colours as usize],
            in_flight: vec![0; colours as usize],
            shared: 0,
            free: match p.schedule {
                Schedule::Immediate => (0..colours).collect(),
                Schedule::RoundRobin => VecDeque::new(),
            },
            cursor: 0,
            seq: 0,
            removed: 0,
            step: 0,
            collisions: 0,
            rng: stream(seed, 2),
            removals: Vec::with_capacity(p.n),
            recycle: Vec::with_capacity(p.n),
        };
        if let Some(init) = &p.initial_loads {
            for (bin, &l) in init.iter().enumerate() {
                for _ in 0..l {
                    let c = s.fresh_colour();
                    s.put(bin as u32, c);
                }
            }
        }
        Ok(s)
    }

    /// Steps taken so far.
    pub fn step_count(&self) -> u64 {
        self.step
    }

    /// Balls in each bin.
    pub fn loads(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        self.bins.iter().map(|q| q.len() as u32)
    }

    /// The bin colour `c` remembers.
    pub fn memory(&self, c: u32) -> Option<u32> {
        let m = self.memory[c as usize];
        (m != NONE).then_some(m)
    }

    /// Colours of the balls in `bin`, oldest first.
    pub fn bin_colours(&self, bin: usize) -> Vec<u32> {
        self.bins[bin].iter().map(|b| b.colour).collect()
    }

    pub fn collisions(&self) -> u64 {
        self.collisions
    }

    /// True once the state can never change again (see the module documentation).
    pub fn is_frozen(&self) -> bool {
        self.schedule == Schedule::Immediate
            && self.ack_every == 1
            && self.shared == 0
            && self.bins.iter().all(|q| !q.is_empty() && q.len() as u32 <= self.tau)
    }

    fn add_ball(&mut self, c: u32) {
        let f = &mut self.in_flight[c as usize];
        *f += 1;
        if *f == 2 {
            self.shared += 1;
        }
    }

    fn drop_ball(&mut self, c: u32) {
        let f = &mut self.in_flight[c as usize];
        *f -= 1;
        if *f == 1 {
            self.shared -= 1;
        }
    }

    /// Throw a ball of colour `c` into `bin` (its ball count is already updated).
    fn push(&mut self, bin: u32, c: u32) {
        self.bins[bin as usize].push_back(Ball {
            seq: self.seq,
            colour: c,
        });
        self.seq += 1;
    }

    fn put(&mut self, bin: u32, c: u32) {
        self.add_ball(c);
        self.push(bin, c);
    }

    /// The colour of a fresh ball (immediate schedule: the next free colour
    /// in round-robin order, else a collision; round-robin: the ring's next).
    fn fresh_colour(&mut self) -> u32 {
        if let Some(c) = self.free.pop_front() {
            return c;
        }
        let c = self.cursor;
        self.cursor = (self.cursor + 1) % self.colours;
        if self.schedule == Schedule::Immediate {
            // Every colour has a ball in flight: this fresh ball shares one,
            // and the colour starts over, remembering nothing.
            self.collisions += 1;
            self.memory[c as usize] = NONE;
        } else if self.in_flight[c as usize] > 0 {
            self.collisions += 1;
        }
        c
    }

    /// Throw a ball of colour `c` (already counted in flight): into the bin
    /// the colour remembers, else uniformly at random. Returns whether the
    /// throw was random.
    fn place(&mut self, c: u32) -> bool {
        let m = self.memory[c as usize];
        let (bin, random) = if m != NONE {
            (m, false)
        } else {
            (self.rng.below(self.n as u64) as u32, true)
        };
        self.push(bin, c);
        random
    }

    /// Throw a new ball of colour `c` (see [`place`](Self::place)).
    fn throw(&mut self, c: u32) -> bool {
        self.add_ball(c);
        self.place(c)
    }

    /// One time step (removals, then throws). Returns the number of balls
    /// thrown at random.
    pub fn step(&mut self) -> u32 {
        self.step += 1;
        self.remove_oldest();
        self.feedback();
        match self.schedule {
            Schedule::Immediate => self.throw_immediate(),
            Schedule::RoundRobin => self.throw_round_robin(),
        }
    }

    /// Every non-empty bin removes its oldest ball (§5.1, FIFO) into
    /// `removals`, in the order the balls were thrown.
    fn remove_oldest(&mut self) {
        self.removals.clear();
        for (i, q) in self.bins.iter_mut().enumerate() {
            let load = q.len() as u32;
            if let Some(b) = q.pop_front() {
                self.removals.push(Removal {
                    seq: b.seq,
                    bin: i as u32,
                    colour: b.colour,
                    load,
                });
            }
        }
        // In the order the balls were thrown (a receiver's arrival order).
        self.removals.sort_unstable_by_key(|r| r.seq);
    }

    /// What each removal teaches its colour: remember or forget the bin, and
    /// (immediate schedule) whether it is recycled into `recycle` or freed.
    fn feedback(&mut self) {
        self.recycle.clear();
        for k in 0..self.removals.len() {
            let r = self.removals[k];
            let c = r.colour as usize;
            self.drop_ball(r.colour);
            self.removed += 1;
            // App. D.1: with ACK coalescing only every k-th removal reports back.
            let feedback = self.removed.is_multiple_of(self.ack_every);
            if feedback && r.load <= self.tau {
                // §5.1: at most τ balls: remember the bin, unless remembering another.
                if self.memory[c] == NONE {
                    self.memory[c] = r.bin;
                }
                if self.schedule == Schedule::Immediate {
                    self.add_ball(r.colour);
                    self.recycle.push(r.colour);
                }
            } else if feedback {
                // §5.1: more than τ balls: the colour forgets its bin.
                self.memory[c] = NONE;
            }
            if self.schedule == Schedule::Immediate && self.in_flight[c] == 0 {
                // Not recycled and no other ball: free for a fresh throw, knowing nothing.
                self.memory[c] = NONE;
                self.free.push_back(r.colour);
            }
        }
    }

    /// The immediate schedule's throws; returns how many were random.
    fn throw_immediate(&mut self) -> u32 {
        let mut random = 0u32;
        // Recycled colours return to their bins at once (App. C; a
        // colour that forgot since, through a second ball, throws at random) ...
        for k in 0..self.recycle.len() {
            let c = self.recycle[k];
            random += self.place(c) as u32;
        }
        // ... and fresh colours make up the step's n throws.
        for _ in self.recycle.len()..self.n {
            let c = self.fresh_colour();
            random += self.throw(c) as u32;
        }
        random
    }

    /// The round-robin schedule's throws: batch (t−1) mod b; returns how many were random.
    fn throw_round_robin(&mut self) -> u32 {
        let mut random = 0u32;
        let batch = ((self.step - 1) % (self.colours / self.n as u32) as u64) as u32;
        for c in batch * self.n as u32..(batch + 1) * self.n as u32 {
            if self.in_flight[c as usize] > 0 {
                self.collisions += 1;
            }
            random += self.throw(c) as u32;
        }
        random
    }
}
