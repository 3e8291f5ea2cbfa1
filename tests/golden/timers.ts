// Run-scoped timers work and order by delay.
const order: string[] = [];
await new Promise<void>((resolve) => {
  setTimeout(() => order.push("second"), 20);
  setTimeout(() => order.push("first"), 1);
  setTimeout(resolve, 40);
});
const cleared = setTimeout(() => order.push("never"), 1);
clearTimeout(cleared);
return order;
