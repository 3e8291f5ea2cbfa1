// Other JSON renders pretty; members that would sit deeper than ten spaces stay compact.
return { a: 1, list: [1, "two", null, true], deep: { l2: { l3: { l4: { l5: { l6: [1, { x: 2 }] } } } } }, empty: {}, none: [] };
