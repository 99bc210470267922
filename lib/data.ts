import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { projectionOf, TABLE_SCHEMA } from '../shared/data/table-schema.ts';

/**
 * Days an artifact's earlier version stays in the versioned bucket once it was replaced or
 * deleted: an index build the embedding worker deleted, a model an erasure wrote again without
 * the erased users (docs/api.md, "Erasing a user"), a pointer replaced by each build. Without an
 * expiry a versioned bucket keeps them all for good: the erased users' histories, and every
 * index build a tenant ever had (one every few minutes while its catalog changes).
 */
export const ARTIFACT_NONCURRENT_DAYS = 7;

/** Days the artifact bucket's access logs are kept. */
export const ACCESS_LOG_DAYS = 90;

/**
 * The single table (items, events, console records) and the artifact bucket (model and index
 * artifacts). Both are retained when the stack is deleted.
 */
export class DataConstruct extends Construct {
  readonly table: dynamodb.Table;
  readonly artifacts: s3.Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const S = dynamodb.AttributeType.STRING;
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: S },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: S },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      deletionProtection: true,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of TABLE_SCHEMA.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: S },
        sortKey: { name: index.sortKey, type: S },
        ...cdkProjection(index),
      });
    }

    const accessLogs = new s3.Bucket(this, 'ArtifactAccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // A line per artifact request (each search container reads the index pointer every
      // INDEX_CHECK_SECONDS): kept 90 days, as the console's logs are.
      lifecycleRules: [{ expiration: Duration.days(ACCESS_LOG_DAYS) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.artifacts = new s3.Bucket(this, 'Artifacts', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'artifacts/',
      // Versioning is the undo of an overwrite or a delete for a week; then the earlier version
      // goes, and the delete marker left alone after it.
      lifecycleRules: [{ id: 'noncurrent-versions', noncurrentVersionExpiration: Duration.days(ARTIFACT_NONCURRENT_DAYS), expiredObjectDeleteMarker: true }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}

/** An index's projection in CDK's terms: the one the local table is made with (`projectionOf`). */
function cdkProjection(index: (typeof TABLE_SCHEMA.indexes)[number]): { projectionType: dynamodb.ProjectionType; nonKeyAttributes?: string[] } {
  const p = projectionOf(index);
  return { projectionType: dynamodb.ProjectionType[p.ProjectionType], ...('NonKeyAttributes' in p ? { nonKeyAttributes: p.NonKeyAttributes } : {}) };
}
