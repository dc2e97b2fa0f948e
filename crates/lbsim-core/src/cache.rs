//! Software prefetch: a hint that some memory will be read soon. Costs
//! nothing where the target has no such instruction.

const LINE: usize = 64;

/// Bring the cache lines of `*v` towards the core.
#[inline(always)]
pub fn prefetch<T>(v: &T) {
    prefetch_head(v, std::mem::size_of::<T>());
}

/// Bring the cache lines of the first `bytes` bytes of `*v` towards the
/// core (a line-aligned `*v` whose hot fields come first).
#[inline(always)]
pub fn prefetch_head<T>(v: &T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = v as *const T as *const i8;
        for offset in (0..bytes.min(std::mem::size_of::<T>())).step_by(LINE) {
            // SAFETY: a prefetch never faults, whatever the address; these lie inside `*v`.
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch(p.wrapping_add(offset), _MM_HINT_T0)
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, bytes);
}
