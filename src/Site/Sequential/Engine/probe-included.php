<?php

declare(strict_types=1);

// Included once by IncludedFiles::find() to see EG(included_files) grow by one. Declares nothing.

return 1;
