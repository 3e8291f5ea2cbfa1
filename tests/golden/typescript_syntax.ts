// Erasable TypeScript is stripped and runs.
interface Point { x: number; y: number }
type Pair<T> = [T, T];
const origin: Point = { x: 0, y: 0 };
function add<T extends number>(a: T, b: T): number { return a + b; }
const pair = [1, 2] as Pair<number>;
const checked = { x: 3, y: 4 } satisfies Point;
let maybe: string | undefined = "present";
class Box<T> { readonly value: T; constructor(value: T) { this.value = value; } }
declare const ambient: number;
const typed = <const T,>(value: T): T => value;
return { sum: add(pair[0], pair[1]), origin, checked, length: maybe!.length, boxed: new Box<string>("v").value, typed: typed("t") };
