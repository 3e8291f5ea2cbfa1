// Strings keep their characters; escapes are JSON's.
console.log("héllo ✓ 😀");
return { text: "tab\there \"quoted\" \\ back", emoji: "😀", control: "\u0001" };
