//! Records the git commit the extension is built from (`lbsim._core.git_commit`),
//! so every run's `run.json` and report can say which code produced it.
//! `<sha>`, with `-dirty` when tracked files had uncommitted changes at build
//! time; empty outside a git checkout (a build from an sdist) or without git.
//! `LBSIM_GIT_COMMIT` in the environment overrides it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=LBSIM_GIT_COMMIT");
    // Rebuild when HEAD moves or the index changes (a commit, a checkout, git add).
    // These paths resolve through worktrees and packed refs.
    let mut watched = vec!["HEAD".to_string(), "index".to_string(), "packed-refs".to_string()];
    if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(head_ref);
    }
    for name in &watched {
        if let Some(path) = git(&["rev-parse", "--git-path", name]) {
            if std::path::Path::new(&path).exists() {
                let abs = std::fs::canonicalize(&path).unwrap_or(path.into());
                println!("cargo:rerun-if-changed={}", abs.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    let commit = match std::env::var("LBSIM_GIT_COMMIT") {
        Ok(v) => v,
        Err(_) => match git(&["rev-parse", "HEAD"]) {
            Some(sha) if sha.len() == 40 => {
                let dirty = git(&["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"])
                    .is_some_and(|s| !s.is_empty());
                if dirty {
                    format!("{sha}-dirty")
                } else {
                    sha
                }
            }
            _ => String::new(),
        },
    };
    println!("cargo:rustc-env=LBSIM_GIT_COMMIT={commit}");
}
