// Loads the compiled addon (build.js); throws when it was not built.
"use strict";
module.exports = require("./build/Release/keccak_tree.node");
