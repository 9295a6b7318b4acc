import { expect } from "chai";
import { blsKeyFromSecret, blsVerify, createBlsSigner } from "../../sdk/bls";
import { isAsyncBlsSigner, workerBlsSigner } from "../../operator/guarantees/signing-worker";

describe("operator/guarantees/signing-worker: BLS signing on a worker thread", function () {
  const { secretKey, publicKey } = blsKeyFromSecret("0x" + "5e".repeat(32));
  const local = createBlsSigner(secretKey);
  const messages = Array.from({ length: 20 }, (_, i) => Buffer.from(`certificate claims ${i}`));

  it("signs exactly as the sdk signer, in-thread and on the worker, batched or not", async function () {
    const signer = workerBlsSigner(secretKey);
    try {
      expect(isAsyncBlsSigner(signer)).to.equal(true);
      expect(isAsyncBlsSigner(local)).to.equal(false);
      expect(Buffer.from(signer.publicKey).equals(Buffer.from(publicKey))).to.equal(true);
      // Same tick: one batch to the worker; then one more on its own.
      const batch = await Promise.all(messages.map((message) => signer.signAsync(message)));
      const single = await signer.signAsync(messages[0]);
      for (const [i, signature] of [...batch, single].entries()) {
        const message = messages[i % messages.length];
        expect(Buffer.from(signature).equals(Buffer.from(local.sign(message)))).to.equal(true);
        expect(blsVerify(publicKey, message, signature)).to.equal(true);
      }
      expect(Buffer.from(signer.sign(messages[1])).equals(Buffer.from(batch[1]))).to.equal(true);
    } finally {
      await signer.close();
    }
  });

  it("packs a batch of pooled views of any length into one transferred buffer, leaving the callers' intact", async function () {
    const signer = workerBlsSigner(secretKey);
    try {
      // Views of Node's shared Buffer pool, as Core's certificate messages are; lengths 0 to 400 bytes.
      const views = [0, 1, 31, 32, 33, 384, 400, 7].map((length, i) =>
        Buffer.from(((i + 1) * 17).toString(16).padStart(2, "0").repeat(length), "hex"),
      );
      const copies = views.map((view) => Buffer.from(view));
      const signatures = await Promise.all(views.map((view) => signer.signAsync(view)));
      for (const [i, view] of views.entries()) {
        expect(view.equals(copies[i])).to.equal(true);
        expect(Buffer.from(signatures[i]).equals(Buffer.from(local.sign(view)))).to.equal(true);
      }
    } finally {
      await signer.close();
    }
  });

  it("answers requests still outstanding at close, and signs in-thread afterwards", async function () {
    const signer = workerBlsSigner(secretKey);
    const outstanding = messages.map((message) => signer.signAsync(message));
    await signer.close();
    const after = await signer.signAsync(messages[2]);
    const signatures = await Promise.all(outstanding);
    signatures.forEach((signature, i) =>
      expect(Buffer.from(signature).equals(Buffer.from(local.sign(messages[i])))).to.equal(true),
    );
    expect(Buffer.from(after).equals(Buffer.from(local.sign(messages[2])))).to.equal(true);
    await signer.close(); // idempotent
  });

  it("refuses an invalid secret key before starting a worker", function () {
    expect(() => workerBlsSigner(new Uint8Array(32))).to.throw();
  });
});
