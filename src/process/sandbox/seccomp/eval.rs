//! A classic-BPF interpreter for the instructions seccomp filters use, so unit tests can
//! run the compiled program on a call and check its verdict without installing it.

use seccompiler::sock_filter;

/// One system call as the filter sees it (`struct seccomp_data`).
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub arch: u32,
    pub nr: i64,
    pub args: [u64; 6],
}

/// The filter's return value for `call` (`SECCOMP_RET_*`, with the errno in its low bits).
pub fn run(program: &[sock_filter], call: &Call) -> u32 {
    let word = |offset: u32| -> u32 {
        match offset {
            0 => call.nr as u32,
            4 => call.arch,
            16..64 if offset.is_multiple_of(4) => {
                let arg = call.args[(offset as usize - 16) / 8];
                // Little-endian: the low word first.
                if offset.is_multiple_of(8) {
                    arg as u32
                } else {
                    (arg >> 32) as u32
                }
            }
            _ => panic!("load outside seccomp_data: {offset}"),
        }
    };
    let (mut pc, mut accumulator) = (0usize, 0u32);
    loop {
        let instruction = &program[pc];
        let (code, k) = (instruction.code, instruction.k);
        pc += 1;
        let jump = |taken: bool| {
            usize::from(if taken {
                instruction.jt
            } else {
                instruction.jf
            })
        };
        match code {
            0x20 => accumulator = word(k),        // BPF_LD | BPF_W | BPF_ABS
            0x54 => accumulator &= k,             // BPF_ALU | BPF_AND | BPF_K
            0x05 => pc += k as usize,             // BPF_JMP | BPF_JA
            0x15 => pc += jump(accumulator == k), // BPF_JEQ
            0x25 => pc += jump(accumulator > k),  // BPF_JGT
            0x35 => pc += jump(accumulator >= k), // BPF_JGE
            0x06 => return k,                     // BPF_RET | BPF_K
            other => panic!("instruction {other:#x} not interpreted"),
        }
    }
}
