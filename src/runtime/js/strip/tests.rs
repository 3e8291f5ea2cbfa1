//! Tests for type stripping: exact outputs, rejections, positions, depth and robustness.

#![allow(clippy::unwrap_used)]

use oxc::allocator::Allocator;
use oxc::parser::{ParseOptions, Parser};
use oxc::span::SourceType;
use proptest::prelude::*;

use super::{StripError, strip_types, strip_types_within};

/// Byte offsets of every line terminator byte, which stripping must leave in place.
fn line_break_offsets(text: &str) -> Vec<usize> {
    text.char_indices()
        .filter(|(_, character)| matches!(character, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
        .map(|(offset, _)| offset)
        .collect()
}

/// Syntax errors oxc reports for `text` read as JavaScript, with the options the engine's
/// wrapper implies (module goal, top-level `return`). Runs on a thread with a large stack,
/// since the deep-nesting tests would overflow the test thread's.
fn javascript_errors(text: &str) -> Vec<String> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(scope, || {
                let allocator = Allocator::default();
                let parsed = Parser::new(&allocator, text, SourceType::mjs())
                    .with_options(ParseOptions {
                        allow_return_outside_function: true,
                        ..ParseOptions::default()
                    })
                    .parse();
                parsed.diagnostics.iter().map(ToString::to_string).collect()
            })
            .unwrap()
            .join()
            .unwrap()
    })
}

/// Line and UTF-16 column (both 0-based) of every non-whitespace character, by byte offset.
fn utf16_positions(text: &str) -> Vec<(usize, usize, usize)> {
    let mut positions = Vec::new();
    let (mut line, mut column) = (0, 0);
    let mut characters = text.char_indices().peekable();
    while let Some((offset, character)) = characters.next() {
        match character {
            '\r' if characters.peek().is_some_and(|&(_, next)| next == '\n') => {}
            '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                line += 1;
                column = 0;
            }
            _ => {
                if !character.is_whitespace() {
                    positions.push((offset, line, column));
                }
                column += character.len_utf16();
            }
        }
    }
    positions
}

/// Strips `input`, expects exactly `expected`, and checks the invariants every accepted
/// program has: same byte length, same line breaks, every kept character at the same line and
/// UTF-16 column, and output that parses as JavaScript.
fn check(input: &str, expected: &str) {
    let output = strip_types(input).unwrap();
    assert_eq!(output, expected, "input: {input:?}");
    assert_eq!(output.len(), input.len());
    assert_eq!(line_break_offsets(&output), line_break_offsets(input));
    let input_positions = utf16_positions(input);
    for position in utf16_positions(&output) {
        let unchanged = input_positions.binary_search(&position).is_ok();
        let written = b";()".contains(&output.as_bytes()[position.0]);
        assert!(
            unchanged || written,
            "moved character at {position:?} in {output:?}"
        );
    }
    assert_eq!(
        javascript_errors(&output),
        Vec::<String>::new(),
        "output: {output:?}"
    );
}

fn check_all(cases: &[(&str, &str)]) {
    for &(input, expected) in cases {
        check(input, expected);
    }
}

fn reject(input: &str, line: u32, column: u32, message: &str) {
    assert_eq!(
        strip_types(input),
        Err(StripError {
            line,
            column,
            message: message.to_owned()
        }),
        "input: {input:?}"
    );
}

const ENUM: &str = "`enum` is not erasable TypeScript: use an object literal with `as const` (or a \
                    union of literal types) instead";
const PARAMETER_PROPERTY: &str = "a constructor parameter property is not erasable TypeScript: \
                                  declare the field in the class body and assign it in the constructor";

fn namespace_message(keyword: &str) -> String {
    format!(
        "`{keyword}` with runtime code is not erasable TypeScript: use a plain object or top-level \
         declarations instead (`declare {keyword}` and a {keyword} holding only types are fine)"
    )
}

#[test]
fn plain_javascript_is_unchanged() {
    check_all(&[
        ("", ""),
        (
            "const a = await tools.read({ path: 'x' });\nreturn a;",
            "const a = await tools.read({ path: 'x' });\nreturn a;",
        ),
        ("let v = a < b > c;", "let v = a < b > c;"),
        (
            "label: for (;;) { break label; }",
            "label: for (;;) { break label; }",
        ),
        (
            "@dec class D { @dec m() {} accessor a = 1; static #p = 2; }",
            "@dec class D { @dec m() {} accessor a = 1; static #p = 2; }",
        ),
        (
            "#!/usr/bin/env node\nreturn 1",
            "#!/usr/bin/env node\nreturn 1",
        ),
    ]);
}

#[test]
fn type_annotations_are_blanked() {
    check_all(&[
        (
            "let x: number = 1, y: string[];",
            "let x         = 1, y          ;",
        ),
        (
            "function f(a: T, b: { c: number }, ...rest: number[]): T { return a; }",
            "function f(a   , b               , ...rest          )    { return a; }",
        ),
        (
            "const g = (x: number): string => String(x);",
            "const g = (x        )         => String(x);",
        ),
        (
            "try { } catch (e: unknown) { }",
            "try { } catch (e         ) { }",
        ),
        (
            "class C { x: number = 1; y: string; static z: boolean; }",
            "class C { x         = 1; y        ; static z         ; }",
        ),
        (
            "const o = { m(a: T): T { return a; }, get g(): number { return 1; } };",
            "const o = { m(a   )    { return a; }, get g()         { return 1; } };",
        ),
        (
            "function isS(x: unknown): x is string { return typeof x === 'string'; }",
            "function isS(x         )              { return typeof x === 'string'; }",
        ),
        (
            "function check(x: unknown): asserts x is string {}",
            "function check(x         )                      {}",
        ),
        (
            "let fn: (a: number) => void = (a) => {};",
            "let fn                      = (a) => {};",
        ),
        (
            "let u: unique symbol, k: keyof typeof o, m: { [K in keyof T]?: T[K] };",
            "let u               , k                , m                           ;",
        ),
        (
            "let t: `a${string}` = `a${b}`;",
            "let t               = `a${b}`;",
        ),
        (
            "let x: // why\n  number = 1;",
            "let x        \n         = 1;",
        ),
    ]);
}

#[test]
fn optional_and_definite_markers_are_blanked() {
    check_all(&[
        (
            "function f(a?, b?: number) {}",
            "function f(a , b         ) {}",
        ),
        ("let x!: number;", "let x         ;"),
        (
            "class C { a?: number; b!: string; c? = 1; [k]?: T; m?(): void {} }",
            "class C { a         ; b         ; c  = 1; [k]    ; m ()       {} }",
        ),
        (
            "class D { accessor a!: number; }",
            "class D { accessor a         ; }",
        ),
    ]);
}

#[test]
fn type_parameters_and_arguments_are_blanked() {
    check_all(&[
        (
            "function f<T extends object = {}>(a: T) {}",
            "function f                       (a   ) {}",
        ),
        (
            "const g = async <T,>(x: T): Promise<T> => x;",
            "const g = async     (x   )             => x;",
        ),
        (
            "const id = <T>(x: T): T => x;",
            "const id =    (x   )    => x;",
        ),
        (
            "let a = f<string>(1), b = new Map<string, number>(), c = tag<T>`x`, d = f<number>;",
            "let a = f        (1), b = new Map                (), c = tag   `x`, d = f        ;",
        ),
        (
            "f<T,>(x); new Foo<Bar>; let z = obj?.a.b?.<T>();",
            "f    (x); new Foo     ; let z = obj?.a.b?.   ();",
        ),
        (
            "class W<in out T> extends Base<T> { m<U>(u: U) {} }",
            "class W           extends Base    { m   (u   ) {} }",
        ),
        (
            "let x = await fetch<Response>(url) as Response;",
            "let x = await fetch          (url)            ;",
        ),
    ]);
}

#[test]
fn assertions_and_non_null_keep_the_expression() {
    check_all(&[
        (
            "let v = x as unknown as string, w = y satisfies Z;",
            "let v = x                     , w = y            ;",
        ),
        (
            "for (const x of xs as number[]) {}",
            "for (const x of xs            ) {}",
        ),
        ("const c = [1, 2] as const;", "const c = [1, 2]         ;"),
        ("let n = z!.k!; a!.b = c!;", "let n = z .k ; a .b = c ;"),
        ("let p = (q as any)!.r;", "let p = (q       ) .r;"),
        ("const x = y satisfies\n  Z;", "const x = y          \n   ;"),
    ]);
}

#[test]
fn type_only_statements_are_blanked_whole() {
    check_all(&[
        (
            "interface I { a: number }\nlet k = 1;",
            "                         \nlet k = 1;",
        ),
        (
            "type T<U> = U | null;\nlet k = 1;",
            "                     \nlet k = 1;",
        ),
        (
            "declare const q: number;\ndeclare function df(): void;\ndeclare class DC {}\nlet k = 1;",
            "                        \n                            \n                   \nlet k = 1;",
        ),
        (
            "declare enum DE { A }\nlet k = 1;",
            "                     \nlet k = 1;",
        ),
        (
            "declare namespace DN { const x: number }\nlet k = 1;",
            "                                        \nlet k = 1;",
        ),
        (
            "declare module 'm' { export const y: number }\ndeclare global { interface Window { a: number } }",
            "                                             \n                                                 ",
        ),
        (
            "namespace TN { export type X = 1; export interface Y {} }\nlet k = 1;",
            "                                                         \nlet k = 1;",
        ),
        (
            "namespace A.B { export namespace C { export type X = 1 } }",
            "                                                          ",
        ),
        (
            "export interface EI {}\nexport type ET = 1;\nexport declare const dc: number;\nexport default interface DI { a: 1 }",
            "                      \n                   \n                                \n                                    ",
        ),
        (
            "function inner() {\n  type Local = string;\n  return 1;\n}",
            "function inner() {\n                      \n  return 1;\n}",
        ),
    ]);
}

#[test]
fn type_only_imports_and_exports_are_blanked() {
    check_all(&[
        (
            "import type { A } from 'a';\nexport type { E } from 'e';\nexport type * from 'h';\nimport type I = require('i');",
            "                           \n                           \n                       \n                             ",
        ),
        (
            "import { type B, C, type D } from 'b';",
            "import {         C,        } from 'b';",
        ),
        (
            "import D, { type A } from 'm';",
            "import D, {        } from 'm';",
        ),
        (
            "export { type F, G };\nexport { type A as B, C as D } from 'x';",
            "export {         G };\nexport {              C as D } from 'x';",
        ),
        ("export as namespace Lib;", "                        "),
    ]);
}

#[test]
fn overload_signatures_are_blanked() {
    check_all(&[
        (
            "function over(a: string): void;\nfunction over(a: number): void;\nfunction over(a: any) {}",
            "                               \n                               \nfunction over(a     ) {}",
        ),
        (
            "export function eo(a: string): void;\nexport default function df2(a: string): void;",
            "                                    \n                                             ",
        ),
        (
            "class C {\n  f(a: string): void;\n  f(a: any) {}\n  constructor(a: string);\n  constructor(a: any) {}\n}",
            "class C {\n                     \n  f(a     ) {}\n                         \n  constructor(a     ) {}\n}",
        ),
    ]);
}

#[test]
fn class_modifiers_and_type_only_members_are_blanked() {
    check_all(&[
        (
            "class C { public x = 1; private y; protected readonly z = 2; override m() {} }",
            "class C {        x = 1;         y;                    z = 2;          m() {} }",
        ),
        (
            "class M { public static readonly s = 1; private static *gen() {} private get g() { return 1; } }",
            "class M {        static          s = 1;         static *gen() {}         get g() { return 1; } }",
        ),
        (
            "class A { private accessor x = 1; override accessor y = 2; }",
            "class A {         accessor x = 1;          accessor y = 2; }",
        ),
        (
            "class D { declare w: string; static declare y: number; [key: string]: any; static [k: number]: 1; }",
            "class D {                                                                                         }",
        ),
        (
            "abstract class A { abstract x: number; protected abstract m(): void; abstract accessor a: T; n() {} }",
            "         class A {                                                                           n() {} }",
        ),
        (
            "export abstract class B {}\nexport default abstract class {}\n@dec abstract class D {}",
            "export          class B {}\nexport default          class {}\n@dec          class D {}",
        ),
        (
            "class C<T> extends Base<T> implements I, J<T> {}",
            "class C    extends Base                       {}",
        ),
        (
            "const K = class<T> implements I { x?: T };",
            "const K = class                 { x     };",
        ),
        (
            "declare class DC { x: number }\nlet k = 1;",
            "                              \nlet k = 1;",
        ),
    ]);
}

#[test]
fn this_parameters_are_blanked_with_their_comma() {
    check_all(&[
        ("function f(this: Window) {}", "function f(            ) {}"),
        (
            "(function (this: Foo, a: T) {});",
            "(function (           a   ) {});",
        ),
        (
            "class C { m(this: C, a: number): void {} }",
            "class C { m(         a        )       {} }",
        ),
    ]);
}

#[test]
fn statement_seams_keep_their_semicolon() {
    check_all(&[
        // `T(` cannot continue a type, so TypeScript ended the statement; JavaScript would not.
        ("let x = y as T\n(z)", "let x = y;    \n(z)"),
        ("let a = b as T\n`x`", "let a = b;    \n`x`"),
        (
            "let a = b satisfies T\n[1].map(f)",
            "let a = b;           \n[1].map(f)",
        ),
        (
            "let a = b\ninterface I {}\n[1].map(f)",
            "let a = b\n;             \n[1].map(f)",
        ),
        (
            "let x = 1\ntype T = 2\n;[1].map(f)",
            "let x = 1\n;         \n [1].map(f)",
        ),
        (
            "let a = b\ndeclare const c: number\n(d)",
            "let a = b\n;                      \n(d)",
        ),
        (
            "class A { x = 1; static { type T = 1; let y: T = 2; } }",
            "class A { x = 1; static {             let y    = 2; } }",
        ),
        (
            "let a = b\nimport type { T } from 't'\n/re/.test(a)",
            "let a = b\n;                         \n/re/.test(a)",
        ),
        (
            "\"use strict\"\ntype T = 1\n(a)",
            "\"use strict\"\n;         \n(a)",
        ),
        (
            "switch (k) { case 1: x = y as T\n(z) }",
            "switch (k) { case 1: x = y;    \n(z) }",
        ),
        (
            "{ let q = r\n  type T = 1\n-1 }",
            "{ let q = r\n  ;         \n-1 }",
        ),
        // No seam needed: a terminated statement, a keyword start, or nothing blanked between.
        ("let a = b as T;\n(c)", "let a = b     ;\n(c)"),
        ("let a = b as T\nf(c)", "let a = b     \nf(c)"),
        ("let a = b!\n(c)", "let a = b \n(c)"),
        // TypeScript itself continues `as T` with a binary operator on the next line.
        ("let q = r as T\n-1", "let q = r     \n-1"),
    ]);
}

#[test]
fn class_member_seams_keep_their_semicolon() {
    check_all(&[
        (
            "class K {\n  x = 1\n  private [y]() {}\n}",
            "class K {\n  x = 1\n  ;       [y]() {}\n}",
        ),
        (
            "class K {\n  x = 1\n  private *g() {}\n  y = 2\n  private in = 3\n}",
            "class K {\n  x = 1\n  ;       *g() {}\n  y = 2\n  ;       in = 3\n}",
        ),
        (
            "class K {\n  z = 2\n  declare w: number\n  [k] = 1\n}",
            "class K {\n  z = 2\n  ;                \n  [k] = 1\n}",
        ),
        (
            "class K {\n  z = a as T\n  [k] = 1\n}",
            "class K {\n  z = a;    \n  [k] = 1\n}",
        ),
        // A bare `get`, `set` or `static` would otherwise swallow the next member.
        (
            "class R {\n  static: number\n  foo() {}\n  set?: number\n  bar() {}\n}",
            "class R {\n  static;       \n  foo() {}\n  set;        \n  bar() {}\n}",
        ),
        // Nothing to protect: no initializer, or the next member cannot continue it.
        (
            "class K {\n  x: number\n  [k]() {}\n  y = 1\n  private z = 2\n}",
            "class K {\n  x        \n  [k]() {}\n  y = 1\n          z = 2\n}",
        ),
    ]);
}

#[test]
fn arrow_line_breaks_stay_legal() {
    check_all(&[
        // `)` and `=>` must share a line: `)` moves to the return type's last line.
        (
            "const h = (x: number)\n  : number => x;",
            "const h = (x         \n         ) => x;",
        ),
        (
            "let big = (x: number\n): number =>\n  x;",
            "let big = (x        \n)         =>\n  x;",
        ),
        (
            "const r = async (x: number): Promise<\n  number\n> => x;",
            "const r = async (x                   \n        \n) => x;",
        ),
        // No ASCII byte in the type's last line: `)` goes into the space before `=>`.
        (
            "let f = (x):\n日本 => x;",
            "let f = (x  \n\u{3000}\u{3000})=> x;",
        ),
        // `async` (or `return`) must share a line with `(`: `(` moves up to `<`.
        (
            "const h2 = async <T,>\n  (x: T) => x;",
            "const h2 = async (   \n   x   ) => x;",
        ),
        ("return <T,>\n  (x: T) => x;", "return (   \n   x   ) => x;"),
    ]);
}

#[test]
fn multi_byte_text_keeps_offsets_and_utf16_columns() {
    check_all(&[
        (
            "let s = \"日本\" as string; // 🎉 comment",
            "let s = \"日本\"          ; // 🎉 comment",
        ),
        (
            "let t: \"日本語\" = \"x\"; let u: \"🎉\" = 1; let v: \"é\" = 2;",
            "let t   \u{3000}\u{3000}\u{3000}  = \"x\"; let u   \u{a0}\u{a0}  = 1; let v   \u{a0}  = 2;",
        ),
        (
            "/* 😀 */ let 名前: 型 = \"値\"; // 注释",
            "/* 😀 */ let 名前  \u{3000} = \"値\"; // 注释",
        ),
        (
            "let a = 1\u{2028}type T = 1\u{2028}let b: T = 2",
            "let a = 1\u{2028}          \u{2028}let b    = 2",
        ),
    ]);
}

#[test]
fn line_endings_are_kept() {
    check_all(&[(
        "let x:\r\n  number = 1;\r\ninterface I {\r\n}\r\n",
        "let x \r\n         = 1;\r\n             \r\n \r\n",
    )]);
}

#[test]
fn non_erasable_constructs_are_rejected() {
    reject("enum E { A }", 1, 1, ENUM);
    reject("let a = 1;\nconst enum E { A }", 2, 1, ENUM);
    reject("export enum X { A }", 1, 8, ENUM);
    reject("function f() {\n  enum Inner { A }\n}", 2, 3, ENUM);
    reject(
        "namespace N { export const x = 1 }",
        1,
        1,
        &namespace_message("namespace"),
    );
    reject(
        "let x = 1; namespace A.B.C { export const y = 1 }",
        1,
        12,
        &namespace_message("namespace"),
    );
    reject(
        "module Foo { export const x = 1 }",
        1,
        1,
        &namespace_message("module"),
    );
    reject(
        "namespace N { type T = 1; let x = 1 }",
        1,
        1,
        &namespace_message("namespace"),
    );
    reject(
        "class P { constructor(private x: number) {} }",
        1,
        23,
        PARAMETER_PROPERTY,
    );
    reject(
        "class Z {\n  constructor(a, readonly x) {}\n}",
        2,
        18,
        PARAMETER_PROPERTY,
    );
    reject(
        "import x = require(\"x\");",
        1,
        1,
        "`import ... =` is not erasable TypeScript: write `const x = require(\"...\")` or `const x = N.y` instead",
    );
    reject(
        "import y = N.y;",
        1,
        1,
        "`import ... =` is not erasable TypeScript: write `const x = require(\"...\")` or `const x = N.y` instead",
    );
    reject(
        "export import A = N.B;",
        1,
        8,
        "`import ... =` is not erasable TypeScript: write `const x = require(\"...\")` or `const x = N.y` instead",
    );
    reject(
        "let f = (x):\n日本=> x;",
        1,
        12,
        "this arrow function's return type cannot be blanked without moving `=>`: put the return \
         type on the line of `)`",
    );
    reject(
        "export = foo;",
        1,
        1,
        "`export =` is not erasable TypeScript: use `export default` instead",
    );
    reject(
        "let y = <T>x;",
        1,
        9,
        "a `<T>expr` type assertion is not supported (nor is JSX): write `expr as T` instead",
    );
}

#[test]
fn the_earliest_problem_is_reported() {
    reject(
        "let a = <T>b;\nenum E { A }",
        1,
        9,
        "a `<T>expr` type assertion is not supported (nor is JSX): write `expr as T` instead",
    );
    reject(
        "const f = () => { enum E {} };\nnamespace N { let x = 1 }",
        1,
        19,
        ENUM,
    );
}

#[test]
fn syntax_errors_carry_oxc_message_and_position() {
    reject("let x: = 1;", 1, 8, "Unexpected token");
    reject("let a = 1;\nlet = ;", 2, 7, "Unexpected token");
    reject("return (1", 1, 10, "Expected `)` but found `EOF`");
    // Columns count chars: the emoji and the CJK are one column each.
    reject("let s = \"🎉日本\"; let x: = 1;", 1, 23, "Unexpected token");
}

#[test]
fn jsx_is_rejected() {
    let jsx = "JSX is not supported: build the value with plain objects or strings instead";
    reject("const e = <div>hi</div>;", 1, 11, jsx);
    reject("let a = 1;\nreturn <><b>{a}</b></>;", 2, 8, jsx);
    reject("const e = <br />;", 1, 11, jsx);
    // Not JSX, and not valid TypeScript either: oxc's own message stays.
    reject(
        "const e = <div>hi</p>;",
        1,
        19,
        "Unterminated regular expression",
    );
}

#[test]
fn error_message_names_program_ts() {
    let error = strip_types("enum E {}").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("SyntaxError: {ENUM} at program.ts:1:1")
    );
}

#[test]
fn oversized_programs_are_rejected() {
    let source = "1;".repeat(600_000);
    reject(
        &source,
        1,
        1,
        "program is too large to strip: 1200000 bytes (the limit is 1048576)",
    );
}

#[test]
fn ten_thousand_deep_nesting_does_not_overflow() {
    const DEPTH: usize = 10_000;
    let parentheses = format!(
        "let x = {}1{} as number;",
        "(".repeat(DEPTH),
        ")".repeat(DEPTH)
    );
    check(
        &parentheses,
        &parentheses.replace(" as number", "          "),
    );

    let arrays = format!(
        "let a: number[] = {}{};",
        "[".repeat(DEPTH),
        "]".repeat(DEPTH)
    );
    check(&arrays, &arrays.replace(": number[]", "          "));

    let generic = format!(
        "let t: {}number{} = 1;",
        "Array<".repeat(DEPTH),
        ">".repeat(DEPTH)
    );
    let generic_out = format!(
        "let t {} = 1;",
        " ".repeat(generic.len() - "let t  = 1;".len())
    );
    check(&generic, &generic_out);

    let sums = format!("let s = {}!;", vec!["a!"; DEPTH].join("+"));
    check(&sums, &sums.replace('!', " "));

    let arrows = format!("let f = {}0;", "(x: number) => ".repeat(DEPTH));
    check(&arrows, &arrows.replace(": number", "        "));

    let casts = format!("let c = x{};", " as T".repeat(DEPTH));
    check(&casts, &casts.replace(" as T", "     "));
}

/// Programs whose nesting the scan misjudges (it reads the `/` after a class or function
/// expression as a regular expression; the parser reads a division of a deep array): the
/// parser is stopped within the stack of what the scan saw, not at the end of its stack.
#[test]
fn nesting_the_scan_misjudges_is_refused_within_a_bounded_stack() {
    const DEPTH: usize = 200_000;
    let hidden = format!("{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    for program in [
        format!("const x = class {{}} / {hidden} / 1;"),
        format!("const x = function () {{}} / {hidden} / 1;"),
    ] {
        let error = strip_types_within(&program, 20_000).unwrap_err();
        assert_eq!(error.message, "the program nests too deeply to parse");
    }
    // What the scan counts low but the engine runs still strips: a 2,000-long `else if`.
    let chain: String = (0..2_000)
        .map(|i| format!("else if (x === {i}) {{ x = {i} }} "))
        .collect();
    let program = format!("let x = 0; if (x < 0) {{ x = 1 }} {chain}");
    assert_eq!(strip_types_within(&program, 20_000).unwrap(), program);
}

#[test]
fn typical_program() {
    let input = r#"interface Hit { path: string; line: number }
type Grouped = Record<string, Hit[]>;

const hits = (await tools.grep({ pattern: "TODO", path: "src" })) as Hit[];
const grouped: Grouped = {};
for (const hit of hits) {
  (grouped[hit.path] ??= []).push(hit);
}

function summarize<T extends Hit>(items: readonly T[], limit = 3): string {
  return items.slice(0, limit).map((item: T): string => `${item.line}`).join(", ");
}

class Counter {
  private count = 0;
  constructor() {}
  bump(by?: number): this { this.count += by ?? 1; return this; }
  get value(): number { return this.count; }
}

const counter = new Counter();
for (const [path, items] of Object.entries(grouped)) {
  console.log(path, summarize<Hit>(items));
  counter.bump(items.length);
}
const first = hits[0]!;
return { files: Object.keys(grouped).length, total: counter.value, first: first.path } satisfies object;
"#;
    let expected = r#"                                            
                                     

const hits = (await tools.grep({ pattern: "TODO", path: "src" }))         ;
const grouped          = {};
for (const hit of hits) {
  (grouped[hit.path] ??= []).push(hit);
}

function summarize               (items              , limit = 3)         {
  return items.slice(0, limit).map((item   )         => `${item.line}`).join(", ");
}

class Counter {
          count = 0;
  constructor() {}
  bump(by         )       { this.count += by ?? 1; return this; }
  get value()         { return this.count; }
}

const counter = new Counter();
for (const [path, items] of Object.entries(grouped)) {
  console.log(path, summarize     (items));
  counter.bump(items.length);
}
const first = hits[0] ;
return { files: Object.keys(grouped).length, total: counter.value, first: first.path }                 ;
"#;
    check(input, expected);
}

/// Fragments that make random programs more likely to reach the interesting paths.
fn fragment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "var ",
        "let x",
        "const ",
        "x",
        "y",
        ": ",
        "number",
        "string",
        " as ",
        " satisfies ",
        "T",
        "<",
        ">",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "=",
        " => ",
        ",",
        ";",
        "\n",
        "?",
        "!",
        "class ",
        "interface ",
        "type ",
        "enum ",
        "namespace ",
        "declare ",
        "abstract ",
        "private ",
        "public ",
        "readonly ",
        "implements ",
        "extends ",
        "import ",
        "export ",
        "function ",
        "return ",
        "await ",
        "async ",
        " ",
        "1",
        "'s'",
        "`t`",
        "/*c*/",
        "//c\n",
        "this",
        ".",
        "+",
        "*",
        "@d ",
        "get ",
        "static ",
    ])
}

proptest! {
    #[test]
    fn random_ascii_never_panics(source in "[ -~\t\n\r]{0,200}") {
        if let Ok(output) = strip_types(&source) {
            prop_assert_eq!(output.len(), source.len());
            prop_assert_eq!(line_break_offsets(&output), line_break_offsets(&source));
        }
    }

    #[test]
    fn random_typescript_like_programs_strip_to_javascript(parts in prop::collection::vec(fragment(), 0..40)) {
        let source = parts.concat();
        if let Ok(output) = strip_types(&source) {
            prop_assert_eq!(output.len(), source.len());
            prop_assert_eq!(line_break_offsets(&output), line_break_offsets(&source));
            prop_assert_eq!(javascript_errors(&output), Vec::<String>::new(), "source {:?} output {:?}", source, output);
        }
    }
}
