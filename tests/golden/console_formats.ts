// How console arguments become text.
console.log({ a: 1, b: [1, 2] }, [3, "x"], null, undefined);
console.log(new Error("boxed"), new TypeError("typed"));
function named() {}
console.log(named, () => 1, 10n, Symbol("s"));
const cycle: any = { name: "c" };
cycle.self = cycle;
console.log(cycle);
console.log("a\nb");
