package io.rdmareactive.rdma.verbs;

/** What ibv_query_device reports that users need, plus whether XRC is available. */
public record DeviceAttributes(
    String firmwareVersion,
    long nodeGuid,
    int vendorId,
    int vendorPartId,
    int physicalPortCount,
    int maxQueuePairs,
    int maxQueuePairWorkRequests,
    int maxScatterGather,
    int maxCompletionQueues,
    int maxCompletionQueueEntries,
    int maxMemoryRegions,
    long maxMemoryRegionSize,
    int maxProtectionDomains,
    int maxSharedReceiveQueues,
    int maxSharedReceiveQueueWorkRequests,
    long deviceCapabilityFlags,
    boolean supportsXrc) {}
