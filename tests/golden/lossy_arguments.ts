/// { "tools": ["echo"] }
// Lossy arguments reject the one call before dispatch: no number, no event, no tools/result.
const rejected: string[] = [];
const cyclic: any = {};
cyclic.self = cyclic;
for (const bad of [{ a: undefined }, { n: NaN }, { n: -0 }, { big: 1n }, cyclic, [1, , 3], new Map(), { f() {} }]) {
  try {
    await tools.echo(bad as any);
    rejected.push("accepted?");
  } catch (e) {
    rejected.push(e.message);
  }
}
try {
  await tools.echo({}, {});
} catch (e) {
  rejected.push(e.message);
}
// The first lossless call is dispatch 1.
rejected.push(JSON.stringify(await tools.echo({ ok: true })));
return rejected;
