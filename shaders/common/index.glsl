// Flat invocation index for 1D work split over a 2D grid (x is capped by maxComputeWorkGroupCount).
layout(local_size_x = 64) in;
uint gid() { return gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x; }
