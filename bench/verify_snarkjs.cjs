// Used by bench/verify: ms per snarkjs.groth16.verify in one node process (after one warm-up call,
// so the curve's start-up is not counted). Usage: node verify_snarkjs.cjs SOURCE_ROOT VK PUBLIC PROOF N
const snarkjs = require(process.argv[2] + "/node_modules/snarkjs/build/main.cjs");
const fs = require("fs");
(async () => {
    const [vkp, pubp, prp, n] = process.argv.slice(3);
    const vk = JSON.parse(fs.readFileSync(vkp));
    const pub = JSON.parse(fs.readFileSync(pubp));
    const proof = JSON.parse(fs.readFileSync(prp));
    if (!(await snarkjs.groth16.verify(vk, pub, proof))) {
        console.log("invalid");
        process.exit(1);
    }
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < +n; i++) await snarkjs.groth16.verify(vk, pub, proof);
    console.log((Number(process.hrtime.bigint() - t0) / 1e6 / +n).toFixed(3));
    process.exit(0);
})();
