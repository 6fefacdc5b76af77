//! The `playforge` binary: parses arguments and hands over to [`playforge::cli`].

fn main() -> std::process::ExitCode {
    playforge::cli::main()
}
