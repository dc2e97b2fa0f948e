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

pub use mimalloc::MiMalloc as Allocator;

/// mimalloc's environment variables for large pages (the current name and
/// the legacy one); when the user sets either, their choice stands.
const LARGE_PAGE_VARS: [&std::ffi::CStr; 2] = [c"MIMALLOC_ALLOW_LARGE_OS_PAGES", c"MIMALLOC_LARGE_OS_PAGES"];

/// Ask mimalloc for transparent huge pages from here on, unless the user's
/// environment says otherwise. mimalloc maps memory in arenas of 1 GiB and
/// decides huge pages or not when it maps one, so this must run before the
/// program's first allocation: the first thing in `main`, or a shared
/// library's constructor. It allocates nothing itself. Where the kernel
/// gives huge pages only on request (`madvise` mode, the usual default)
/// mimalloc requests them; where it gives none this costs one failed `mmap`
/// now and then.
pub fn prefer_huge_pages() {
    // SAFETY: getenv reads the environment without allocating (nothing else
    // in the process writes it this early); mi_option_set writes one of
    // mimalloc's option words.
    unsafe {
        if LARGE_PAGE_VARS.iter().any(|v| !libc::getenv(v.as_ptr()).is_null()) {
            return;
        }
        libmimalloc_sys::mi_option_set(libmimalloc_sys::mi_option_large_os_pages, 1);
    }
}
