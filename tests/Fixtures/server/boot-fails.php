<?php

declare(strict_types=1);

throw new RuntimeException('database unreachable at boot');
