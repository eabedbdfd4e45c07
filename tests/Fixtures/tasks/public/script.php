<?php

declare(strict_types=1);

// A sequential-tier script runs a task: it waits for it as for any call.
echo 'task worker ', \Kiln\App\task([TaskJobs::class, 'pid'])->await(), ' served script ', getmypid();
