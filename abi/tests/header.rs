//! `include/mpi.h` against its reference, MPICH 4.0.2's header: every
//! constant MPICH defines exists in ours with the same value, the header
//! compiles cleanly as C99, C11 and C++, and it declares exactly the
//! table's functions. Needs MPICH's development files (`libmpich-dev`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The function table, from the build script's output (the library is a
/// cdylib only).
mod table {
    include!(concat!(env!("OUT_DIR"), "/table.rs"));
}

/// Where Debian puts MPICH's headers.
const MPICH_INCLUDE: &str = "/usr/include/x86_64-linux-gnu/mpich";

fn our_include() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

fn mpich_include() -> PathBuf {
    let dir = PathBuf::from(MPICH_INCLUDE);
    assert!(
        dir.join("mpi.h").is_file(),
        "MPICH's mpi.h is not in {MPICH_INCLUDE}: install it with \
         `sudo apt-get install libmpich-dev` (or run scripts/setup.sh)"
    );
    dir
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxabi-header-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The value [`constants`] records for an enumerator.
const ENUMERATOR: &str = "<enumerator>";

/// Object-like macro and enumerator names of a header, with the macro's
/// text ([`ENUMERATOR`] for enumerators).
fn constants(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut in_enum = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#define ") {
            let rest = rest.trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rest[name.len()..].starts_with('(') {
                continue; // function-like
            }
            let value = rest[name.len()..].split("/*").next().unwrap().trim();
            out.insert(name, value.to_string());
            continue;
        }
        if t.contains("enum") && !t.ends_with(';') {
            in_enum = true;
        }
        if in_enum {
            let name: String = t
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.starts_with("MPI") && !name.is_empty() {
                out.insert(name, ENUMERATOR.to_string());
            }
            if t.contains('}') {
                in_enum = false;
            }
        }
    }
    out
}

/// Names the comparison skips: addresses of library objects (differ by
/// design), type and function aliases, and empty feature macros.
fn comparable(name: &str, value: &str) -> bool {
    let skip = [
        "MPI_DUP_FN",
        "MPI_COMM_DUP_FN",
        "MPI_TYPE_DUP_FN",
        "MPI_WIN_DUP_FN",
        "MPIO_Request",
        "MPIO_Wait",
        "MPIO_Test",
        "PMPIO_Wait",
        "PMPIO_Test",
        "MPI_AINT_FMT_DEC_SPEC",
        "MPI_AINT_FMT_HEX_SPEC",
    ];
    (name.starts_with("MPI_") || name.starts_with("MPIX_") || name.starts_with("MPIO_"))
        && !skip.contains(&name)
        && !value.is_empty()
}

/// MPICH names we deliberately do not define.
fn not_ours(name: &str) -> bool {
    // MPICH-internal (MPIR_*, MPIU_*, attribute macros), feature
    // advertising (MPICH_*, MPIIMPL_*, ROMIO_*: only the version macros
    // are ours, checked apart), QMPI, and MPICH's private printf formats.
    name.starts_with("MPIR_")
        || name.starts_with("MPIU_")
        || name.starts_with("MPICH")
        || name.starts_with("MPIIMPL_")
        || name.starts_with("QMPI")
        || name.starts_with("MPI_AINT_FMT")
        || name.starts_with("ROMIO_")
        || name == "NO_TAGS_WITH_MODIFIERS"
        || name == "MPI_INCLUDED"
        || name == "MPIO_INCLUDE"
}

fn compile_and_run(dir: &Path, include: &Path, source: &str, tag: &str) -> String {
    let src = dir.join(format!("{tag}.c"));
    let exe = dir.join(tag);
    fs::write(&src, source).unwrap();
    let out = Command::new("cc")
        .args(["-std=c11", "-w", "-I"])
        .arg(include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("cannot run cc");
    assert!(
        out.status.success(),
        "compiling the constant dump against {} failed:\n{}",
        include.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    String::from_utf8(run.stdout).unwrap()
}

#[test]
fn every_mpich_constant_exists_with_the_same_value() {
    let mpich = mpich_include();
    let mut theirs = constants(&fs::read_to_string(mpich.join("mpi.h")).unwrap());
    theirs.extend(constants(
        &fs::read_to_string(mpich.join("mpio.h")).unwrap(),
    ));
    let mut ours = constants(&fs::read_to_string(our_include().join("mpi.h")).unwrap());
    ours.extend(constants(
        &fs::read_to_string(our_include().join("mpio.h")).unwrap(),
    ));

    let missing: Vec<&String> = theirs
        .keys()
        .filter(|n| !ours.contains_key(*n) && !not_ours(n))
        .collect();
    assert!(
        missing.is_empty(),
        "constants of MPICH's mpi.h missing from ours: {missing:?}"
    );
    // mpi4py built from source takes MPICH_NAME as a promise of all of
    // MPICH 4; OPEN_MPI would name the other ABI.
    for banned in ["MPICH_NAME", "OPEN_MPI"] {
        assert!(
            !ours.contains_key(banned),
            "our mpi.h must not define {banned}"
        );
    }
    // "Which MPI is this": the MPICH release whose ABI this is, exactly.
    for name in [
        "MPICH",
        "MPICH_VERSION",
        "MPICH_NUMVERSION",
        "MPICH_RELEASE_TYPE_PATCH",
    ] {
        assert_eq!(
            ours.get(name)
                .map(|v| v.split_whitespace().collect::<String>()),
            theirs
                .get(name)
                .map(|v| v.split_whitespace().collect::<String>()),
            "{name} differs from MPICH's"
        );
    }

    let names: BTreeSet<&String> = theirs
        .iter()
        .filter(|(n, v)| comparable(n, v) && ours.contains_key(*n))
        .map(|(n, _)| n)
        .collect();
    assert!(names.len() > 300, "only {} constants compared", names.len());
    let mut src = String::from(
        "#include <mpi.h>\n#include <stdint.h>\n#include <stdio.h>\nint main(void)\n{\n",
    );
    for n in &names {
        src.push_str(&format!(
            "    printf(\"%s %lld\\n\", \"{n}\", (long long)(intptr_t)({n}));\n"
        ));
    }
    src.push_str("    return 0;\n}\n");
    let dir = scratch("values");
    let ref_values = compile_and_run(&dir, &mpich, &src, "mpich");
    let our_values = compile_and_run(&dir, &our_include(), &src, "ours");
    let diffs: Vec<String> = ref_values
        .lines()
        .zip(our_values.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("MPICH `{a}` vs ours `{b}`"))
        .collect();
    assert!(
        diffs.is_empty(),
        "constants that differ:\n{}",
        diffs.join("\n")
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn types_have_the_mpich_sizes() {
    let probe = "#include <mpi.h>\n#include <stdio.h>\n#include <stddef.h>\n\
        int main(void) {\n\
        printf(\"%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\\n\", sizeof(MPI_Comm), \
        sizeof(MPI_Datatype), sizeof(MPI_Request), sizeof(MPI_Status), sizeof(MPI_Aint), \
        sizeof(MPI_Offset), sizeof(MPI_Count), sizeof(MPI_Fint), sizeof(MPI_File), \
        offsetof(MPI_Status, MPI_SOURCE), offsetof(MPI_Status, MPI_ERROR));\n\
        return 0; }\n";
    let dir = scratch("sizes");
    let a = compile_and_run(&dir, &mpich_include(), probe, "mpich");
    let b = compile_and_run(&dir, &our_include(), probe, "ours");
    assert_eq!(a, b);
    assert_eq!(b.trim(), "4 4 4 20 8 8 8 4 8 8 16");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn header_compiles_cleanly_as_c_and_cpp() {
    let dir = scratch("strict");
    let body = "#include <mpi.h>\n#include <mpio.h>\n\
        int main(void) { MPI_Status s; MPI_Request r = MPI_REQUEST_NULL; (void)s; (void)r;\n\
        return MPI_Comm_c2f(MPI_COMM_WORLD) == 0; }\n";
    for (compiler, std, ext) in [
        ("cc", "-std=c99", "c"),
        ("cc", "-std=c11", "c"),
        ("c++", "-std=c++11", "cpp"),
        ("c++", "-std=c++17", "cpp"),
    ] {
        let src = dir.join(format!("strict{std}.{ext}"));
        fs::write(&src, body).unwrap();
        let out = Command::new(compiler)
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
                "-I",
            ])
            .arg(our_include())
            .arg(&src)
            .output()
            .expect("cannot run the compiler");
        assert!(
            out.status.success(),
            "{compiler} {std}: mpi.h does not compile cleanly:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn header_declares_every_table_function_and_no_other() {
    let header = fs::read_to_string(our_include().join("mpi.h")).unwrap();
    let declared: BTreeSet<String> = header
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let open = l.find('(')?;
            let name = l[..open].rsplit(' ').next()?;
            ["MPI_", "PMPI_", "MPIX_", "PMPIX_"]
                .iter()
                .any(|p| name.starts_with(p))
                .then(|| name.to_string())
        })
        .collect();
    let mut expected = BTreeSet::new();
    for (name, _) in table::FUNCTIONS {
        expected.insert(name.to_string());
        expected.insert(format!("P{name}"));
    }
    let extra: Vec<_> = declared.difference(&expected).collect();
    let missing: Vec<_> = expected.difference(&declared).collect();
    assert!(missing.is_empty(), "not declared: {missing:?}");
    assert!(extra.is_empty(), "declared but not in the table: {extra:?}");
    // MPICH 4.0.2's 619 MPI_ functions and its 15 MPIX_ ones.
    let mpix = table::FUNCTIONS.iter().filter(|f| f.0.starts_with("MPIX_"));
    assert_eq!((table::FUNCTIONS.len(), mpix.count()), (634, 15));
}
