//! The memory allocator of lbsim's programs (`lbsim-cli` and the Python
//! extension declare it as their global allocator; the library's own tests
//! keep the system one).
//!
//! A large network's state (ports, link FIFOs, flows: hundreds of MB at 8192
//! hosts) is read in an order no cache predicts, so nearly every event misses
//! the TLB as well as the caches. mimalloc, told to use transparent huge pages
//! (2 MiB), maps that state with 512 times fewer TLB entries: the 32 768-host
//! bench runs 7 % faster, for 6 % more peak memory there (1 MiB) and 15-45 MB
//! more in small runs (docs/performance.md, "Huge pages"). Results do not
//! depend on addresses, so the allocator moves no result.

//! mimalloc also returns memory freed for a while (1 s in v3) to the OS, and
//! a huge page given back is zeroed again by the kernel when it is touched
//! anew: at 8192 hosts (1 MiB) that cost 6000 page faults and 8 % of the run
//! (`clear_page_erms` in the profile). lbsim keeps what it frees: peak memory
//! is the same high-water mark, a few per cent more of it stays resident.

use libmimalloc_sys::mi_option_t;
pub use mimalloc::MiMalloc as Allocator;

/// mimalloc v3's `mi_option_purge_delay` (its position in `mi_option_e`,
/// mimalloc.h), which libmimalloc-sys does not name; a test checks it
/// against the option's documented default.
const PURGE_DELAY: mi_option_t = 15;

/// mimalloc's environment variables for large pages and for the purge delay
/// (current and legacy names); when the user sets one, their choice stands.
const LARGE_PAGE_VARS: [&std::ffi::CStr; 2] = [c"MIMALLOC_ALLOW_LARGE_OS_PAGES", c"MIMALLOC_LARGE_OS_PAGES"];
const PURGE_DELAY_VARS: [&std::ffi::CStr; 2] = [c"MIMALLOC_PURGE_DELAY", c"MIMALLOC_RESET_DELAY"];

/// Ask mimalloc for transparent huge pages from here on, and never to give
/// freed memory back to the OS, unless the user's environment says
/// otherwise. mimalloc maps memory in arenas of 1 GiB and decides huge
/// pages or not when it maps one, so this must run before the program's
/// first allocation: the first thing in `main`, or a shared library's
/// constructor. It allocates nothing itself. Where the kernel gives huge
/// pages only on request (`madvise` mode, the usual default) mimalloc
/// requests them; where it gives none this costs one failed `mmap` now and
/// then.
pub fn configure() {
    // SAFETY: getenv reads the environment without allocating (nothing else
    // in the process writes it this early); mi_option_set writes one of
    // mimalloc's option words.
    unsafe {
        let unset = |vars: &[&std::ffi::CStr]| vars.iter().all(|v| libc::getenv(v.as_ptr()).is_null());
        if unset(&LARGE_PAGE_VARS) {
            libmimalloc_sys::mi_option_set(libmimalloc_sys::mi_option_large_os_pages, 1);
        }
        if unset(&PURGE_DELAY_VARS) {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, -1);
        }
    }
}

#[cfg(test)]
mod tests {
    /// `PURGE_DELAY` is the option whose default mimalloc v3 documents as
    /// 1000 ms (this library's tests use the system allocator and never
    /// call `configure`, so the option is untouched here).
    #[test]
    fn purge_delay_names_mimallocs_option() {
        // SAFETY: reads one of mimalloc's option words.
        let v = unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        assert_eq!(v, 1000, "option {} is not mimalloc's purge delay", super::PURGE_DELAY);
    }
}
