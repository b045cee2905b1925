/**
 * Passwords refused at any length: the most common ones of public breach corpora (the heads of the
 * RockYou and "top passwords" lists), lower-cased. Small on purpose: the appliance works offline,
 * so it cannot ask a breach service; the length floor does the rest.
 */
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  "000000", "00000000", "111111", "11111111", "121212", "123", "123123", "123321", "1234", "123456",
  "1234567", "12345678", "123456789", "1234567890", "1234qwer", "147258369", "159753", "1q2w3e", "1q2w3e4r",
  "1q2w3e4r5t", "1q2w3e4r5t6y", "1qaz2wsx", "1qaz2wsx3edc", "50cent", "654321", "666666", "696969", "753951",
  "852456", "88888888", "987654321", "9876543210", "a123456", "aa123456", "abc123", "abc12345", "abcd1234",
  "abcdef", "abcdefg", "abcdefgh", "access", "admin", "administrator", "amanda", "andrew", "angel", "angels",
  "anthony", "apple", "arsenal", "asdasd", "asdfgh", "asdfghjkl", "asdqwe", "ashley", "autumn", "azerty",
  "azertyuiop", "baby123", "babygirl", "barcelona", "baseball", "baseball1", "batman", "biteme", "blahblah",
  "brother", "buster", "butterfly", "changeit", "changeme", "charlie", "cheese", "chelsea", "chocolate",
  "christ", "computer", "contrasena", "cookie", "corvette", "cowboys", "daniel", "default", "demo",
  "diamond", "donald", "dragon", "eagles", "elizabeth", "eminem", "family", "father", "ferrari", "flower",
  "football", "football1", "forever", "freedom", "friends", "fuckoff", "fuckyou", "ginger", "golden",
  "google", "guest", "hannah", "harley", "hello", "hockey", "hunter", "iloveyou", "iloveyou1", "iloveyou2",
  "internet", "jennifer", "jessica", "jesus", "jordan23", "joshua", "killer", "lakers", "letmein",
  "letmein123", "letmeinnow", "liverpool", "login", "lovely", "loveme", "lover", "lovers", "loveyou",
  "maggie", "master", "matrix", "matthew", "mediabox", "mediabox123", "mercedes", "metallica", "michael",
  "michelle", "monkey", "motdepasse", "mother", "mustang", "mypass", "mypassword", "myspace1", "nicole",
  "ninja", "nirvana", "nothing", "orange", "p@ssw0rd", "p@ssword", "pass123", "pass1234", "passport",
  "passw0rd", "password", "password1", "password12", "password123", "password1234", "passwort", "pepper",
  "pokemon", "porsche", "princess", "princess1", "purple", "q1w2e3r4", "q1w2e3r4t5", "qazwsx", "qweasd",
  "qweasdzxc", "qwer1234", "qwerty", "qwerty1", "qwerty12", "qwerty123", "qwerty1234", "qwertyuiop",
  "ranger", "robert", "rockstar", "root", "sample", "samsung", "secret", "senha", "shadow", "silver",
  "sister", "slipknot", "soccer", "spring", "startrek", "starwars", "starwars1", "summer", "sunshine",
  "sunshine1", "superman", "superstar", "taylor", "temp", "temp123", "test", "test123", "test1234", "thomas",
  "toor", "trustme", "trustno1", "user", "welcome", "welcome1", "welcome123", "whatever", "whatever1",
  "winter", "yankees", "yellow", "zaq12wsx", "zxcvbnm", "zxcvbnm123",
]);
