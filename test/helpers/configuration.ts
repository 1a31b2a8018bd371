/** 02 Operation receipt `proof` of an applied review (copy, compensation or setup), as the client can check it. */
export function expectedProof(review: Record<string, any>): Record<string, string> {
  return { schema: 'service.configuration-operation/1', approvalFingerprint: review.fingerprint, configurationFingerprint: review.snapshot.fingerprint };
}
