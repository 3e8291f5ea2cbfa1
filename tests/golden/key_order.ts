// Object keys keep insertion order (integer-like keys first, as in JavaScript).
return { zeta: 1, alpha: 2, "10": "ten", "2": "two", middle: 3 };
