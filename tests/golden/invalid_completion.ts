// A completion that is not lossless JSON.
console.log("computing");
return { when: new Date(0) };
